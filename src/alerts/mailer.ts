// The SMTP client (nodemailer) for SMTP_URL: one transport per process, with
// time-outs short enough that a send ends well within the outbox lease
// (src/alerts/sender.ts), so a slow server never makes a second sender take
// an e-mail the first is still sending.
import { createTransport } from 'nodemailer';
import { STARTTLS_PARAMETER } from '../config/settings/alerts.ts';
import type { AlertMessage } from './templates.ts';

/** Each wait of one send: connecting, the greeting, an idle socket. A send ends within a few of these. */
export const SMTP_TIMEOUT_MS = 30_000;

export interface Mailer {
  /** Sends one message; resolves with the SMTP server's final answer ("250 2.0.0 Ok: queued as …"), rejects with its error. */
  send(to: string, message: AlertMessage): Promise<string>;
  close(): void;
}

export interface SmtpFailure {
  message: string;
  /** Retrying the same e-mail would be refused again: the server rejected this recipient for good (5xx). */
  permanent: boolean;
}

/**
 * The transport's URL and TLS rule. A login in an `smtp://` URL must not go
 * in clear text: STARTTLS is required (nodemailer's requireTLS), unless
 * `?starttls=optional` says the relay is on the loopback (the configuration
 * refuses it for any other host). The query is removed: nodemailer would
 * read its parameters as options, over ours.
 */
export function smtpTransportTarget(smtpUrl: string): { url: string; requireTLS: boolean } {
  const url = new URL(smtpUrl);
  const optional = url.searchParams.get(STARTTLS_PARAMETER) === 'optional';
  url.search = '';
  return { url: url.toString(), requireTLS: url.protocol === 'smtp:' && url.username !== '' && !optional };
}

export function createMailer(smtpUrl: string, from: string): Mailer {
  const transport = createTransport({
    ...smtpTransportTarget(smtpUrl),
    connectionTimeout: SMTP_TIMEOUT_MS,
    greetingTimeout: SMTP_TIMEOUT_MS,
    socketTimeout: SMTP_TIMEOUT_MS,
    dnsTimeout: SMTP_TIMEOUT_MS,
  });
  return {
    async send(to, message) {
      const info = await transport.sendMail({
        from,
        to,
        subject: message.subject,
        text: message.text,
        html: message.html,
        headers: { 'auto-submitted': 'auto-generated' },
      });
      return info.response;
    },
    close() {
      transport.close();
    },
  };
}

/** What to change when the server offers no STARTTLS and SMTP_URL holds a login. */
export const NO_STARTTLS =
  'the SMTP server does not offer STARTTLS, and the login in SMTP_URL must not be sent in clear text: ' +
  `use a server that offers STARTTLS, or smtps:// (port 465); for a relay on this machine only, add ?${STARTTLS_PARAMETER}=optional to SMTP_URL`;

/**
 * What an SMTP error means for the e-mail: only a 5xx refusal of the
 * recipient or the message, or a server without the STARTTLS a login
 * requires, is final; a server away, a 4xx, a refused login or
 * a refused sender (settings to fix, after which the e-mails should still go)
 * is retried.
 * The message never carries SMTP_URL's password: nodemailer's errors name the
 * server's answer, not the URL.
 */
export function describeSmtpFailure(error: unknown): SmtpFailure {
  const e = error as { message?: string; code?: string; command?: string; response?: unknown; permanent?: boolean };
  // The server answered STARTTLS with a refusal (it does not offer it): no login was sent, and none will be until SMTP_URL changes.
  if (e.code === 'ETLS' && e.command === 'STARTTLS' && typeof e.response === 'string') {
    return { message: `${NO_STARTTLS} (the server answered: ${e.response.slice(0, 200)})`, permanent: true };
  }
  const message = e.message ?? String(error);
  // By the command refused: nodemailer's EENVELOPE also covers MAIL FROM, a sender the relay refuses (ALERT_FROM, a setting to fix).
  const recipientRefused = e.command === 'RCPT TO' || e.command === 'DATA';
  return { message, permanent: e.permanent === true && recipientRefused };
}
