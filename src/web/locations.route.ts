// The locations pages (docs/interface.md §14): list, create, edit, delete (after a
// confirmation page), make primary. Everything goes through the locations
// service, and forms are validated with the API's own schemas.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { LOCATION_FIELDS, LocationCreateBody, LocationPatchBody, type Location } from '../locations/locations.schemas.ts';
import { createLocation, deleteLocation, getLocation, listLocations, makePrimary, updateLocation } from '../locations/locations.service.ts';
import type { Csrf } from '../crypto/csrf.ts';
import {
  fieldErrorsOf,
  formValidator,
  formValues,
  pathId,
  noticeFor,
  nullableNumber,
  nullableText,
  type FieldErrors,
  type FormBody,
} from './forms.ts';
import { sendPage } from './layout.ts';
import { confirmDeletePage } from './pages/confirm-delete.page.ts';
import { locationFormPage } from './pages/location-form.page.ts';
import { locationsPage } from './pages/locations.page.ts';
import { sectionAccess, type SignedIn } from './signed-in.ts';

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
    const hide = { schema: { hide: true } };
    const { page, form } = sectionAccess(csrf, 'locations');
    const showForm = (reply: FastifyReply, ctx: SignedIn, values: Record<string, string>, errors: FieldErrors, id?: string) =>
      sendPage(reply, 400, locationFormPage({ nav: ctx.nav, values, errors, ...(id ? { id } : {}) }));

    app.get<{ Querystring: { done?: unknown } }>('/ui/locations', hide, async (request, reply) => {
      const ctx = await page(request, reply);
      if (!ctx) return reply;
      const locations = await listLocations(app.db, ctx.organizationId);
      const message = noticeFor(NOTICES, request.query.done);
      return sendPage(reply, 200, locationsPage({ nav: ctx.nav, locations, ...(message ? { notice: message } : {}) }));
    });

    app.get('/ui/locations/new', hide, async (request, reply) => {
      const ctx = await page(request, reply);
      if (!ctx) return reply;
      return sendPage(reply, 200, locationFormPage({ nav: ctx.nav, values: {}, errors: {} }));
    });

    app.post<{ Body: FormBody }>('/ui/locations', hide, async (request, reply) => {
      const ctx = await form(request, reply);
      if (!ctx) return reply;
      const values = formValues(request.body, LOCATION_FIELDS);
      const body = { ...editableFields(values), is_primary: values.is_primary === 'on' };
      const result = validateCreate(body);
      if (!result.ok) return showForm(reply, ctx, values, result.errors);
      const failed = await fieldErrorsOf(() => createLocation(app.db, app.caches, ctx.organizationId, result.value), LABELS);
      if (failed) return showForm(reply, ctx, values, failed);
      return reply.redirect('/ui/locations?done=created', 303);
    });

    app.get<{ Params: { id: string } }>('/ui/locations/:id/edit', hide, async (request, reply) => {
      const ctx = await page(request, reply);
      if (!ctx) return reply;
      const location = await getLocation(app.db, ctx.organizationId, pathId(request.params.id, 'location'));
      return sendPage(reply, 200, locationFormPage({ nav: ctx.nav, id: location.id, values: storedValues(location), errors: {} }));
    });

    app.post<{ Params: { id: string }; Body: FormBody }>('/ui/locations/:id', hide, async (request, reply) => {
      const ctx = await form(request, reply);
      if (!ctx) return reply;
      const id = pathId(request.params.id, 'location');
      const values = formValues(request.body, LOCATION_FIELDS);
      const result = validatePatch(editableFields(values));
      if (!result.ok) return showForm(reply, ctx, values, result.errors, id);
      const failed = await fieldErrorsOf(() => updateLocation(app.db, app.caches, ctx.organizationId, id, result.value), LABELS);
      if (failed) return showForm(reply, ctx, values, failed, id);
      return reply.redirect('/ui/locations?done=updated', 303);
    });

    app.post<{ Params: { id: string }; Body: FormBody }>('/ui/locations/:id/primary', hide, async (request, reply) => {
      const ctx = await form(request, reply);
      if (!ctx) return reply;
      await makePrimary(app.db, app.caches, ctx.organizationId, pathId(request.params.id, 'location'));
      return reply.redirect('/ui/locations?done=primary', 303);
    });

    app.get<{ Params: { id: string } }>('/ui/locations/:id/delete', hide, async (request, reply) => {
      const ctx = await page(request, reply);
      if (!ctx) return reply;
      const location = await getLocation(app.db, ctx.organizationId, pathId(request.params.id, 'location'));
      return sendPage(
        reply,
        200,
        confirmDeletePage({
          nav: ctx.nav,
          title: `Delete ${location.name}?`,
          message: `The location is removed for everyone in ${ctx.nav.organizationName}. Service areas linked to it are kept, without a location.`,
          action: `/ui/locations/${location.id}/delete`,
          cancelHref: '/ui/locations',
          button: 'Delete location',
        }),
      );
    });

    app.post<{ Params: { id: string }; Body: FormBody }>('/ui/locations/:id/delete', hide, async (request, reply) => {
      const ctx = await form(request, reply);
      if (!ctx) return reply;
      await deleteLocation(app.db, app.caches, ctx.organizationId, pathId(request.params.id, 'location'));
      return reply.redirect('/ui/locations?done=deleted', 303);
    });
  };
}
