// PostgreSQL constraint violations of the locations and service-areas tables,
// recognised by constraint name (never by message text) and turned into API
// errors. Constraints the request schemas already guarantee are not listed: if
// one of those fails it is a bug, and it surfaces as a 500 with a request id.
import * as errors from '../errors.ts';
import { violatedConstraint } from '../db/pg-errors.ts';
import { ValidationProblem } from '../http/problem-details.plugin.ts';

export const ONE_PRIMARY_INDEX = 'locations_one_primary_per_org';

/** Rethrows a known constraint violation as its API error; anything else unchanged. */
export function mapConstraintError(error: unknown): never {
  switch (violatedConstraint(error)) {
    case ONE_PRIMARY_INDEX:
      throw new errors.LOCATION_PRIMARY_CONFLICT();
    case 'service_areas_location_fkey':
      // The same answer whether the location never existed or belongs to another organization.
      throw new ValidationProblem([{ field: 'location_id', message: 'is not a location of this organization' }]);
    case 'locations_coordinates_pair':
      throw new ValidationProblem([{ field: 'latitude', message: 'and longitude must both be numbers or both be null' }]);
    default:
      throw error;
  }
}
