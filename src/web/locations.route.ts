// The locations pages (docs/interface.md §14): list, create, edit, delete (after a
// confirmation page), make primary. Everything goes through the locations
// service, and forms are validated with the API's own schemas.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { LOCATION_FIELDS, LocationCreateBody, LocationPatchBody, type Location } from '../locations/locations.schemas.ts';
import { createLocation, deleteLocation, getLocation, listLocations, makePrimary, updateLocation } from '../locations/locations.service.ts';
import type { Csrf } from '../crypto/csrf.ts';
import { formValidator, formValues, pathId, noticeFor, nullableNumber, nullableText, type FieldErrors, type FormBody } from './forms.ts';
import { sendPage } from './layout.ts';
import { locationFormPage } from './pages/location-form.page.ts';
import { locationsPage } from './pages/locations.page.ts';
import { deleteRecordRoutes, saveRecordForm } from './record-routes.ts';
import { sectionAccess, signedIn, type SignedIn } from './signed-in.ts';

const LABELS = { name: 'Name', latitude: 'Latitude', longitude: 'Longitude' };
const NOTICES = {
  created: 'Location created.',
  updated: 'Location saved.',
  deleted: 'Location deleted. Service areas linked to it are kept, unlinked.',
  primary: 'Primary location changed.',
};

/** The form's text as the API's JSON: empty optional line 2 and coordinates become null. */
function editableFields(values: Record<string, string>) {
  return {
    name: values.name,
    address_line1: values.address_line1,
    address_line2: nullableText(values.address_line2!),
    city: values.city,
    state: values.state,
    postal_code: values.postal_code,
    country: values.country,
    latitude: nullableNumber(values.latitude!),
    longitude: nullableNumber(values.longitude!),
  };
}

function storedValues(location: Location): Record<string, string> {
  return {
    name: location.name,
    address_line1: location.address_line1,
    address_line2: location.address_line2 ?? '',
    city: location.city,
    state: location.state,
    postal_code: location.postal_code,
    country: location.country,
    latitude: location.latitude === null ? '' : String(location.latitude),
    longitude: location.longitude === null ? '' : String(location.longitude),
  };
}

export function locationPages(csrf: Csrf) {
  return async function registerLocationPages(app: FastifyInstance) {
    const validateCreate = formValidator<LocationCreateBody>(LocationCreateBody);
    const validatePatch = formValidator<LocationPatchBody>(LocationPatchBody);
    const access = sectionAccess(csrf, 'locations');
    const showForm = (reply: FastifyReply, ctx: SignedIn, values: Record<string, string>, errors: FieldErrors, id?: string) =>
      sendPage(reply, 400, locationFormPage({ nav: ctx.nav, values, errors, ...(id ? { id } : {}) }));

    app.get<{ Querystring: { done?: unknown } }>('/ui/locations', access.route, async (request, reply) => {
      const ctx = signedIn(request);
      const locations = await listLocations(app.db, ctx.organizationId);
      const message = noticeFor(NOTICES, request.query.done);
      return sendPage(reply, 200, locationsPage({ nav: ctx.nav, locations, ...(message ? { notice: message } : {}) }));
    });

    app.get('/ui/locations/new', access.route, async (request, reply) => {
      const ctx = signedIn(request);
      return sendPage(reply, 200, locationFormPage({ nav: ctx.nav, values: {}, errors: {} }));
    });

    app.post<{ Body: FormBody }>('/ui/locations', access.route, async (request, reply) => {
      const ctx = signedIn(request);
      const values = formValues(request.body, LOCATION_FIELDS);
      return saveRecordForm(reply, {
        data: { ...editableFields(values), is_primary: values.is_primary === 'on' },
        validate: validateCreate,
        write: (body) => createLocation(app.db, app.caches, ctx.organizationId, body),
        labels: LABELS,
        showForm: (errors) => showForm(reply, ctx, values, errors),
        done: '/ui/locations?done=created',
      });
    });

    app.get<{ Params: { id: string } }>('/ui/locations/:id/edit', access.route, async (request, reply) => {
      const ctx = signedIn(request);
      const location = await getLocation(app.db, ctx.organizationId, pathId(request.params.id, 'location'));
      return sendPage(reply, 200, locationFormPage({ nav: ctx.nav, id: location.id, values: storedValues(location), errors: {} }));
    });

    app.post<{ Params: { id: string }; Body: FormBody }>('/ui/locations/:id', access.route, async (request, reply) => {
      const ctx = signedIn(request);
      const id = pathId(request.params.id, 'location');
      const values = formValues(request.body, LOCATION_FIELDS);
      return saveRecordForm(reply, {
        data: editableFields(values),
        validate: validatePatch,
        write: (patch) => updateLocation(app.db, app.caches, ctx.organizationId, id, patch),
        labels: LABELS,
        showForm: (errors) => showForm(reply, ctx, values, errors, id),
        done: '/ui/locations?done=updated',
      });
    });

    app.post<{ Params: { id: string }; Body: FormBody }>('/ui/locations/:id/primary', access.route, async (request, reply) => {
      const ctx = signedIn(request);
      await makePrimary(app.db, app.caches, ctx.organizationId, pathId(request.params.id, 'location'));
      return reply.redirect('/ui/locations?done=primary', 303);
    });

    deleteRecordRoutes(app, {
      base: '/ui/locations',
      what: 'location',
      access,
      find: (ctx, id) => getLocation(app.db, ctx.organizationId, id),
      remove: (ctx, id) => deleteLocation(app.db, app.caches, ctx.organizationId, id),
      prompt: (location, ctx) => ({
        title: `Delete ${location.name}?`,
        message: `The location is removed for everyone in ${ctx.nav.organizationName}. Service areas linked to it are kept, without a location.`,
        cancelHref: '/ui/locations',
        button: 'Delete location',
      }),
    });
  };
}
