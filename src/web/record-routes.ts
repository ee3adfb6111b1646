// What the pages of an organization's records (locations, service areas,
// webhook subscriptions) do alike: a create or edit form post checked with the
// API's own schema and written by the service, and deleting only after a
// confirmation page. Each section keeps its own texts and services.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { type FieldErrors, type FormBody, fieldErrorsOf, pathId, type Validated } from './forms.ts';
import { sendPage } from './layout.ts';
import { confirmDeletePage } from './pages/confirm-delete.page.ts';
import { signedIn, type SectionAccess, type SignedIn } from './signed-in.ts';

/**
 * A create or edit form post: a finding of the schema, or of the service
 * (a field only the database can check), shows the form again with the
 * message beside its field; a write redirects to `done` (Post/Redirect/Get).
 */
export async function saveRecordForm<T>(
  reply: FastifyReply,
  input: {
    data: Record<string, unknown>;
    validate: (data: Record<string, unknown>) => Validated<T>;
    write: (value: T) => Promise<unknown>;
    labels: Record<string, string>;
    showForm: (errors: FieldErrors) => unknown;
    done: string;
  },
): Promise<unknown> {
  const result = input.validate(input.data);
  if (!result.ok) return input.showForm(result.errors);
  const failed = await fieldErrorsOf(() => input.write(result.value), input.labels);
  if (failed) return input.showForm(failed);
  return reply.redirect(input.done, 303);
}

/**
 * GET `<base>/:id/delete` asks, and only its POST deletes, then redirects to
 * `<base>?done=deleted`. `what` names the record in a 404 for an id that is not one.
 */
export function deleteRecordRoutes<R extends { id: string }>(
  app: FastifyInstance,
  input: {
    base: string;
    what: string;
    access: SectionAccess;
    find: (ctx: SignedIn, id: string) => Promise<R>;
    remove: (ctx: SignedIn, id: string) => Promise<unknown>;
    prompt: (record: R, ctx: SignedIn) => { title: string; message: string; button: string; cancelHref: string };
  },
): void {
  app.get<{ Params: { id: string } }>(`${input.base}/:id/delete`, input.access.route, async (request, reply) => {
    const ctx = signedIn(request);
    const record = await input.find(ctx, pathId(request.params.id, input.what));
    return sendPage(
      reply,
      200,
      confirmDeletePage({ nav: ctx.nav, action: `${input.base}/${record.id}/delete`, ...input.prompt(record, ctx) }),
    );
  });

  app.post<{ Params: { id: string }; Body: FormBody }>(`${input.base}/:id/delete`, input.access.route, async (request, reply) => {
    const ctx = signedIn(request);
    await input.remove(ctx, pathId(request.params.id, input.what));
    return reply.redirect(`${input.base}?done=deleted`, 303);
  });
}
