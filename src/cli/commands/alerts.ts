import { handler, type Command } from '../command.ts';

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
  run: handler(() => import('./alerts.handlers.ts'), 'alertsTest'),
};
