// The service-area pages (docs/interface.md §14): list, create, edit, delete (after a
// confirmation page), linked to one of the organization's locations, with a
// radius. Everything goes through the service-areas service and the API's schemas.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { listLocations } from '../locations/locations.service.ts';
import {
  SERVICE_AREA_FIELDS,
  ServiceAreaCreateBody,
  ServiceAreaPatchBody,
  type ServiceArea,
} from '../service-areas/service-areas.schemas.ts';
import {
  createServiceArea,
  deleteServiceArea,
  getServiceArea,
  listServiceAreas,
  updateServiceArea,
} from '../service-areas/service-areas.service.ts';
import type { Csrf } from '../crypto/csrf.ts';
import { formValidator, formValues, pathId, noticeFor, nullableNumber, nullableText, type FieldErrors, type FormBody } from './forms.ts';
import { sendPage } from './layout.ts';
import { serviceAreaFormPage } from './pages/service-area-form.page.ts';
import { serviceAreasPage } from './pages/service-areas.page.ts';
import { deleteRecordRoutes, saveRecordForm } from './record-routes.ts';
import { sectionAccess, signedIn, type SignedIn } from './signed-in.ts';

const LABELS = { location_id: 'The location', radius_km: 'Radius' };
const NOTICES = { created: 'Service area created.', updated: 'Service area saved.', deleted: 'Service area deleted.' };

/** The form's text as the API's JSON: empty optional fields are null, the radius a number. */
function editableFields(values: Record<string, string>) {
  return {
    label: values.label,
    area_type: nullableText(values.area_type!),
    value: nullableText(values.value!),
    country: nullableText(values.country!),
    radius_km: nullableNumber(values.radius_km!),
    location_id: nullableText(values.location_id!),
  };
}

function storedValues(area: ServiceArea): Record<string, string> {
  return {
    label: area.label,
    area_type: area.area_type ?? '',
    value: area.value ?? '',
    country: area.country ?? '',
    radius_km: area.radius_km === null ? '' : String(area.radius_km),
    location_id: area.location_id ?? '',
  };
}

export function serviceAreaPages(csrf: Csrf) {
  return async function registerServiceAreaPages(app: FastifyInstance) {
    const validateCreate = formValidator<ServiceAreaCreateBody>(ServiceAreaCreateBody);
    const validatePatch = formValidator<ServiceAreaPatchBody>(ServiceAreaPatchBody);
    const access = sectionAccess(csrf, 'service-areas');
    const showForm = async (reply: FastifyReply, ctx: SignedIn, values: Record<string, string>, errors: FieldErrors, id?: string) =>
      sendPage(
        reply,
        400,
        serviceAreaFormPage({
          nav: ctx.nav,
          values,
          errors,
          locations: await listLocations(app.db, ctx.organizationId),
          ...(id ? { id } : {}),
        }),
      );

    app.get<{ Querystring: { done?: unknown } }>('/ui/service-areas', access.route, async (request, reply) => {
      const ctx = signedIn(request);
      const [areas, locations] = await Promise.all([
        listServiceAreas(app.db, ctx.organizationId),
        listLocations(app.db, ctx.organizationId),
      ]);
      const message = noticeFor(NOTICES, request.query.done);
      return sendPage(reply, 200, serviceAreasPage({ nav: ctx.nav, areas, locations, ...(message ? { notice: message } : {}) }));
    });

    app.get('/ui/service-areas/new', access.route, async (request, reply) => {
      const ctx = signedIn(request);
      const locations = await listLocations(app.db, ctx.organizationId);
      return sendPage(reply, 200, serviceAreaFormPage({ nav: ctx.nav, locations, values: {}, errors: {} }));
    });

    app.post<{ Body: FormBody }>('/ui/service-areas', access.route, async (request, reply) => {
      const ctx = signedIn(request);
      const values = formValues(request.body, SERVICE_AREA_FIELDS);
      return saveRecordForm(reply, {
        data: editableFields(values),
        validate: validateCreate,
        write: (body) => createServiceArea(app.db, ctx.organizationId, body),
        labels: LABELS,
        showForm: (errors) => showForm(reply, ctx, values, errors),
        done: '/ui/service-areas?done=created',
      });
    });

    app.get<{ Params: { id: string } }>('/ui/service-areas/:id/edit', access.route, async (request, reply) => {
      const ctx = signedIn(request);
      const area = await getServiceArea(app.db, ctx.organizationId, pathId(request.params.id, 'service area'));
      const locations = await listLocations(app.db, ctx.organizationId);
      return sendPage(reply, 200, serviceAreaFormPage({ nav: ctx.nav, id: area.id, locations, values: storedValues(area), errors: {} }));
    });

    app.post<{ Params: { id: string }; Body: FormBody }>('/ui/service-areas/:id', access.route, async (request, reply) => {
      const ctx = signedIn(request);
      const id = pathId(request.params.id, 'service area');
      const values = formValues(request.body, SERVICE_AREA_FIELDS);
      return saveRecordForm(reply, {
        data: editableFields(values),
        validate: validatePatch,
        write: (patch) => updateServiceArea(app.db, ctx.organizationId, id, patch),
        labels: LABELS,
        showForm: (errors) => showForm(reply, ctx, values, errors, id),
        done: '/ui/service-areas?done=updated',
      });
    });

    deleteRecordRoutes(app, {
      base: '/ui/service-areas',
      what: 'service area',
      access,
      find: (ctx, id) => getServiceArea(app.db, ctx.organizationId, id),
      remove: (ctx, id) => deleteServiceArea(app.db, ctx.organizationId, id),
      prompt: (area, ctx) => ({
        title: `Delete ${area.label}?`,
        message: `The service area is removed for everyone in ${ctx.nav.organizationName}.`,
        cancelHref: '/ui/service-areas',
        button: 'Delete service area',
      }),
    });
  };
}
