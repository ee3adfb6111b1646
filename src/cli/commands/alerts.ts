import { alertRecipients } from '../../alerts/preferences.queries.ts';
import { createMailer, describeSmtpFailure } from '../../alerts/mailer.ts';
import { renderTestMessage } from '../../alerts/templates.ts';
import type { Command } from '../command.ts';
import { optionalString, output, requireString, requireUuid, UsageError, withDatabase, type CommandContext } from '../context.ts';

export const alertsTestCommand: Command = {
  name: 'alerts test',
  summary: "Send a test alert e-mail over SMTP_URL and print the SMTP server's answer",
  description:
    "Without --to it goes to the organization's owners and admins who have alerts on, one e-mail each. Exits 1 when the SMTP server refused or could not be reached (its answer printed).",
  options: [
    { name: 'org', value: 'ORG_ID', required: true, description: 'the organization the e-mail is for' },
    { name: 'to', value: 'ADDRESS', description: "send it to this address only, instead of the organization's owners and admins" },
  ],
  json: '{results: [{to, sent, response}]}',
  run: alertsTest,
};

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
