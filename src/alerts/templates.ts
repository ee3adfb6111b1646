// The alert e-mails, in plain text and HTML: the subject names the app and,
// for a subscription, the receiver's host; the body says what happened, since
// when, how many deliveries wait, and links to the subscription's page or the
// connected apps page; the footer says how to turn alerts off.
import { printableUrl } from '../url-characters.ts';
import { escapeHtml } from '../http/escape-html.ts';
import { receiverHost, type AlertDetails, type AlertKind, type AlertSubjectType } from './alert.ts';

export interface AlertMessage {
  subject: string;
  text: string;
  html: string;
}

export interface AlertContent {
  kind: AlertKind;
  subject_type: AlertSubjectType;
  subject_id: string;
  details: AlertDetails;
}

/** The page alerts are turned off on (per organization). */
export const ALERT_SETTINGS_PATH = '/ui/alerts';

function when(iso: string): string {
  return `${iso.replace('T', ' ').slice(0, 16)} UTC`;
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

interface Parts {
  subject: string;
  /** Sentences, one paragraph each. */
  paragraphs: string[];
  link: { label: string; url: string };
}

function parts(alert: AlertContent, baseUrl: string, organizationName: string): Parts {
  const d = alert.details;
  const host = d.url ? receiverHost(d.url) : '';
  const url = printableUrl(d.url ?? '');
  const subscriptionLink = { label: 'Open the subscription', url: `${baseUrl}/ui/webhooks/${alert.subject_id}` };
  const waiting =
    d.waiting === undefined
      ? ''
      : d.waiting === 0
        ? 'No deliveries are waiting.'
        : `${plural(d.waiting, 'delivery is', 'deliveries are')} waiting for it.`;
  switch (alert.kind) {
    case 'incident':
      return {
        subject: `[Switchboard] ${d.app}: deliveries to ${host} are failing`,
        paragraphs: [
          `The receiver of ${d.app} at ${url} has not accepted deliveries since ${when(d.since)}: its circuit is open, so Switchboard is holding completed calls for ${organizationName} back and tries again from time to time.`,
          waiting,
          'Nothing is lost while it waits; once the receiver answers, the waiting deliveries go out. If it keeps failing for five days, the subscription is disabled. Check the app (a Zap turned off, a URL that changed) and the subscription’s page.',
        ],
        link: subscriptionLink,
      };
    case 'recovered':
      return {
        subject: `[Switchboard] ${d.app}: deliveries to ${host} have recovered`,
        paragraphs: [
          `The receiver of ${d.app} at ${url} answers again${d.ended_at ? ` since ${when(d.ended_at)}` : ''}: the incident that began ${when(d.since)} is over, and the deliveries that waited are going out.`,
        ],
        link: subscriptionLink,
      };
    case 'disabled':
      return {
        subject: `[Switchboard] ${d.app}: subscription to ${host} disabled`,
        paragraphs: [
          `The subscription of ${d.app} to ${url} was disabled on ${when(d.since)} after five days in which every delivery failed. No completed calls of ${organizationName} reach it now.`,
          waiting,
          'Fix the receiver, then enable the subscription again on its page: the deliveries kept meanwhile can be sent again there.',
        ],
        link: subscriptionLink,
      };
    case 'failing':
      return {
        subject: `[Switchboard] ${d.app}: deliveries to ${host} failed for good`,
        paragraphs: [
          `${d.failed === undefined ? 'Deliveries' : plural(d.failed, 'delivery', 'deliveries')} of ${d.app} to ${url} failed for good since ${when(d.since)}: every retry was refused (a receiver that answers 404, say, once its Zap or URL is gone), while other deliveries may still succeed.`,
          waiting,
          'Check the app and its receiver URL; failed deliveries can be sent again from the subscription’s page. You get at most one such e-mail a day for this subscription.',
        ],
        link: subscriptionLink,
      };
    case 'revoked': {
      const why =
        d.reason === 'code_replay'
          ? 'an authorization code was used twice'
          : 'a refresh token that had already been replaced was used again';
      return {
        subject: `[Switchboard] ${d.app}: connection revoked`,
        paragraphs: [
          `The connection of ${d.app} to ${organizationName} was revoked on ${when(d.since)} because ${why}, which can mean the app’s credentials were copied. Its tokens no longer work${
            d.subscriptions ? `, and its ${plural(d.subscriptions, 'webhook subscription', 'webhook subscriptions')} stopped` : ''
          }.`,
          `To carry on, connect ${d.app} again from the app (sign in and approve it); if you did not expect this, check who has access to the app’s account first.`,
        ],
        link: { label: 'Connected apps', url: `${baseUrl}/connected-apps` },
      };
    }
  }
}

function footer(baseUrl: string, organizationName: string): string {
  return `You get this e-mail as an owner or admin of ${organizationName} on Switchboard. To turn these alerts off for yourself, go to ${baseUrl}${ALERT_SETTINGS_PATH} (signed in to ${organizationName}).`;
}

export function renderAlert(alert: AlertContent, options: { baseUrl: string; organizationName: string }): AlertMessage {
  const p = parts(alert, options.baseUrl, options.organizationName);
  const paragraphs = p.paragraphs.filter(Boolean);
  const foot = footer(options.baseUrl, options.organizationName);
  const text = `${paragraphs.join('\n\n')}\n\n${p.link.label}: ${p.link.url}\n\n-- \n${foot}\n`;
  const body = paragraphs.map((paragraph) => `<p>${escapeHtml(paragraph)}</p>`).join('\n');
  const htmlText = `<!doctype html>
<html><body style="font-family: system-ui, sans-serif; line-height: 1.5; color: #1f2933; max-width: 40em">
${body}
<p><a href="${escapeHtml(p.link.url)}">${escapeHtml(p.link.label)}</a></p>
<hr>
<p style="font-size: 0.85em; color: #52606d">${escapeHtml(foot).replace(
    escapeHtml(`${options.baseUrl}${ALERT_SETTINGS_PATH}`),
    `<a href="${escapeHtml(`${options.baseUrl}${ALERT_SETTINGS_PATH}`)}">${escapeHtml(`${options.baseUrl}${ALERT_SETTINGS_PATH}`)}</a>`,
  )}</p>
</body></html>
`;
  return { subject: p.subject.replace(/[\r\n]+/g, ' '), text, html: htmlText };
}

/** The `switchboard alerts test` e-mail. */
export function renderTestMessage(options: { baseUrl: string; organizationName: string }): AlertMessage {
  const foot = footer(options.baseUrl, options.organizationName);
  const line = `This is a test e-mail from Switchboard (${options.baseUrl}) for ${options.organizationName}: alerts reach this address.`;
  return {
    subject: `[Switchboard] Test alert for ${options.organizationName}`.replace(/[\r\n]+/g, ' '),
    text: `${line}\n\n-- \n${foot}\n`,
    html: `<!doctype html>\n<html><body style="font-family: system-ui, sans-serif"><p>${escapeHtml(line)}</p><hr><p style="font-size: 0.85em">${escapeHtml(foot)}</p></body></html>\n`,
  };
}
