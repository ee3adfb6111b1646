// What the `switchboard alerts test` command does, declared in alerts.ts and loaded only when
// it runs (command.ts, handler).
import { alertRecipients } from '../../alerts/preferences.queries.ts';
import { createMailer, describeSmtpFailure } from '../../alerts/mailer.ts';
import { renderTestMessage } from '../../alerts/templates.ts';
import { optionalString, output, requireString, requireUuid, UsageError, withDatabase, type CommandContext } from '../context.ts';

/** A plain address, as ALERT_FROM is checked: no display name, no list. */
const ADDRESS = /^[^\s@<>()",;:]+@[^\s@<>()",;:]+$/;

export async function alertsTest(ctx: CommandContext) {
  const organizationId = requireUuid('--org', requireString(ctx, 'org'));
  const to = optionalString(ctx, 'to');
  if (to !== undefined && (!ADDRESS.test(to) || to.length > 254)) throw new UsageError(`--to must be one e-mail address, got "${to}"`);
  const { smtpUrl, alertFrom, baseUrl } = ctx.config;
  if (!smtpUrl) throw new UsageError('SMTP_URL is not set: alerts are not sent');
  const organization = await withDatabase(ctx.config, (pool) => alertRecipients(pool, organizationId));
  if (!organization) throw new UsageError(`organization ${organizationId} does not exist`);
  const recipients = to ? [to] : organization.emails;
  if (recipients.length === 0) {
    throw new UsageError(`organization ${organizationId} has no active owner or admin with alerts on; give --to ADDRESS`);
  }
  const mailer = createMailer(smtpUrl, alertFrom);
  const message = renderTestMessage({ baseUrl, organizationName: organization.name });
  const results: { to: string; sent: boolean; response: string }[] = [];
  try {
    for (const recipient of recipients) {
      try {
        results.push({ to: recipient, sent: true, response: await mailer.send(recipient, message) });
      } catch (error) {
        results.push({ to: recipient, sent: false, response: describeSmtpFailure(error).message });
      }
    }
  } finally {
    mailer.close();
  }
  output(ctx, { results }, results.map((r) => `${r.to}: ${r.sent ? 'sent' : 'NOT sent'}: ${r.response}`).join('\n'));
  const refused = results.filter((r) => !r.sent).length;
  if (refused > 0) throw new Error(`${refused} of ${results.length} test e-mails not sent`);
}
