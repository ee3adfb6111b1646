// GET /ui/alerts and POST /ui/alerts: the signed-in owner's or admin's own
// alert e-mails in the current organization, on or off (src/alerts/).
import type { FastifyInstance } from 'fastify';
import { alertPreference, receivesAlerts, setAlertPreference, type AlertRecipient } from '../alerts/preferences.service.ts';
import { ALERT_SETTINGS_PATH } from '../alerts/templates.ts';
import type { Csrf } from '../crypto/csrf.ts';
import { ValidationProblem } from '../http/problem-details.plugin.ts';
import { sendPage } from './layout.ts';
import { alertsPage } from './pages/alerts.page.ts';
import { errorPage } from './pages/error.page.ts';
import { sectionAccess, signedIn, type SignedIn } from './signed-in.ts';

function recipient(ctx: SignedIn): AlertRecipient {
  return { organizationId: ctx.organizationId, userId: ctx.session.user_id, role: ctx.session.role };
}

export function alertPages(csrf: Csrf) {
  return async function registerAlertPages(app: FastifyInstance) {
    const access = sectionAccess(csrf, 'home');

    app.get<{ Querystring: { saved?: string } }>(ALERT_SETTINGS_PATH, access.route, async (request, reply) => {
      const ctx = signedIn(request);
      const enabled = await alertPreference(app.db, recipient(ctx));
      const saved = request.query.saved === '1' ? `Alert e-mails turned ${enabled ? 'on' : 'off'}.` : undefined;
      return sendPage(
        reply,
        200,
        alertsPage({
          nav: ctx.nav,
          receives: receivesAlerts(recipient(ctx)),
          enabled,
          sending: Boolean(app.config.smtpUrl),
          ...(saved ? { notice: saved } : {}),
        }),
      );
    });

    app.post<{ Body: { csrf?: unknown; enabled?: unknown } }>(ALERT_SETTINGS_PATH, access.route, async (request, reply) => {
      const ctx = signedIn(request);
      const value = request.body?.enabled;
      if (value !== 'true' && value !== 'false') throw new ValidationProblem([{ field: 'enabled', message: 'must be true or false' }]);
      // Members get no alerts: nothing of theirs to turn on or off.
      if (!(await setAlertPreference(app.db, recipient(ctx), value === 'true'))) {
        return sendPage(
          reply,
          403,
          errorPage({
            title: 'Owners and admins only',
            message: 'Only owners and admins get alert e-mails.',
            hint: 'Nothing was changed.',
            nav: ctx.nav,
          }),
        );
      }
      return reply.redirect(`${ALERT_SETTINGS_PATH}?saved=1`, 303);
    });
  };
}
