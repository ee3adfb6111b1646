// The location and service-area tools: the bodies and rules of the REST
// routes (their schemas, their services); an update takes the id beside the fields.
import { Type, type TObject } from '@sinclair/typebox';
import { Uuid } from '../../http/schemas.ts';
import { LocationCreateBody, LocationPatchBody, Location as LocationSchema, type Location } from '../../locations/locations.schemas.ts';
import { createLocation, deleteLocation, listLocations, makePrimary, updateLocation } from '../../locations/locations.service.ts';
import {
  ServiceAreaCreateBody,
  ServiceAreaPatchBody,
  ServiceArea as ServiceAreaSchema,
  type ServiceArea,
} from '../../service-areas/service-areas.schemas.ts';
import { createServiceArea, deleteServiceArea, listServiceAreas, updateServiceArea } from '../../service-areas/service-areas.service.ts';
import { count, DELETE, defineTool, READ_ONLY, UPDATE, WRITE } from './tool.ts';

/** A PATCH body with the id it applies to: at least one field besides the id. */
function withId<T extends TObject>(patch: T) {
  return Type.Unsafe<{ id: string } & Record<string, unknown>>({
    ...patch,
    properties: { id: Uuid, ...patch.properties },
    required: ['id'],
    minProperties: 2,
  });
}

const IdOnly = Type.Object({ id: Uuid }, { additionalProperties: false });
const Deleted = Type.Object({ deleted: Uuid });

function locationLine(l: Location): string {
  const place = [l.city, l.country].filter(Boolean).join(', ');
  return `- ${l.name}${l.is_primary ? ' (primary)' : ''}${place ? `, ${place}` : ''} (id ${l.id})`;
}

function areaLine(a: ServiceArea): string {
  return `- ${a.label}${a.radius_km !== null ? `, ${a.radius_km} km` : ''} (id ${a.id})`;
}

export const locationTools = [
  defineTool({
    name: 'list_locations',
    title: 'Locations',
    description: "The organization's locations (offices, branches), the primary one marked.",
    scope: 'locations:read',
    annotations: READ_ONLY,
    input: Type.Object({}, { additionalProperties: false }),
    output: Type.Object({ locations: Type.Array(LocationSchema) }),
    async run(ctx) {
      const locations = await listLocations(ctx.pool, ctx.principal.organizationId);
      return { structured: { locations }, text: `${count(locations.length, 'location')}:\n${locations.map(locationLine).join('\n')}` };
    },
  }),
  defineTool({
    name: 'create_location',
    title: 'Add a location',
    description: 'Adds a location. Only name is required; latitude and longitude go together.',
    scope: 'locations:write',
    annotations: WRITE,
    input: LocationCreateBody,
    output: Type.Object({ location: LocationSchema }),
    async run(ctx, args) {
      const location = await createLocation(ctx.pool, ctx.caches, ctx.principal.organizationId, args);
      return { structured: { location }, text: `Added:\n${locationLine(location)}` };
    },
  }),
  defineTool({
    name: 'update_location',
    title: 'Change a location',
    description: 'Changes the fields given of one location; null clears a nullable field.',
    scope: 'locations:write',
    annotations: UPDATE,
    input: withId(LocationPatchBody),
    output: Type.Object({ location: LocationSchema }),
    async run(ctx, { id, ...patch }) {
      const location = await updateLocation(ctx.pool, ctx.caches, ctx.principal.organizationId, id, patch);
      return { structured: { location }, text: `Changed:\n${locationLine(location)}` };
    },
  }),
  defineTool({
    name: 'set_primary_location',
    title: 'Make a location primary',
    description: "Makes one location the organization's primary location (the previous one stops being primary).",
    scope: 'locations:write',
    annotations: UPDATE,
    input: IdOnly,
    output: Type.Object({ location: LocationSchema }),
    async run(ctx, args) {
      const location = await makePrimary(ctx.pool, ctx.caches, ctx.principal.organizationId, args.id);
      return { structured: { location }, text: `Now primary:\n${locationLine(location)}` };
    },
  }),
  defineTool({
    name: 'delete_location',
    title: 'Delete a location',
    description: 'Deletes a location; its service areas stay, unlinked.',
    scope: 'locations:write',
    annotations: DELETE,
    input: IdOnly,
    output: Deleted,
    async run(ctx, args) {
      await deleteLocation(ctx.pool, ctx.caches, ctx.principal.organizationId, args.id);
      return { structured: { deleted: args.id }, text: `Deleted location ${args.id}.` };
    },
  }),
  defineTool({
    name: 'list_service_areas',
    title: 'Service areas',
    description: 'The areas the organization serves (cities, regions, postal codes, radii around a location).',
    scope: 'locations:read',
    annotations: READ_ONLY,
    input: Type.Object({}, { additionalProperties: false }),
    output: Type.Object({ service_areas: Type.Array(ServiceAreaSchema) }),
    async run(ctx) {
      const areas = await listServiceAreas(ctx.pool, ctx.principal.organizationId);
      return { structured: { service_areas: areas }, text: `${count(areas.length, 'service area')}:\n${areas.map(areaLine).join('\n')}` };
    },
  }),
  defineTool({
    name: 'create_service_area',
    title: 'Add a service area',
    description: 'Adds a service area. Only label is required.',
    scope: 'locations:write',
    annotations: WRITE,
    input: ServiceAreaCreateBody,
    output: Type.Object({ service_area: ServiceAreaSchema }),
    async run(ctx, args) {
      const area = await createServiceArea(ctx.pool, ctx.principal.organizationId, args);
      return { structured: { service_area: area }, text: `Added:\n${areaLine(area)}` };
    },
  }),
  defineTool({
    name: 'update_service_area',
    title: 'Change a service area',
    description: 'Changes the fields given of one service area; null clears a nullable field.',
    scope: 'locations:write',
    annotations: UPDATE,
    input: withId(ServiceAreaPatchBody),
    output: Type.Object({ service_area: ServiceAreaSchema }),
    async run(ctx, { id, ...patch }) {
      const area = await updateServiceArea(ctx.pool, ctx.principal.organizationId, id, patch);
      return { structured: { service_area: area }, text: `Changed:\n${areaLine(area)}` };
    },
  }),
  defineTool({
    name: 'delete_service_area',
    title: 'Delete a service area',
    description: 'Deletes a service area.',
    scope: 'locations:write',
    annotations: DELETE,
    input: IdOnly,
    output: Deleted,
    async run(ctx, args) {
      await deleteServiceArea(ctx.pool, ctx.principal.organizationId, args.id);
      return { structured: { deleted: args.id }, text: `Deleted service area ${args.id}.` };
    },
  }),
];
