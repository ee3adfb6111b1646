// A real SMTP server in the test process (smtp-server), parsing what arrives
// (mailparser), for the alert tests. It requires the login SMTP_URL carries,
// can refuse for a while (a 4xx, as a server over its limits answers, or a 5xx
// at the sender, a recipient or the message) and be stopped and started again
// on the same port (a server away).
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { testTlsCredentials } from './https-target.ts';

export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
  headers: Map<string, unknown>;
}

export interface TestSmtpServer {
  /**
   * SMTP_URL for it, with its user and password; without STARTTLS (the default) it carries
   * `?starttls=optional`, the opt-out for a relay on the loopback.
   */
  url: string;
  /** Logins the server received (right or wrong), and how many of them came over TLS. */
  logins: { total: number; secure: number };
  port: number;
  mails: ReceivedMail[];
  /** Messages refused so far (refusing, or a wrong login). */
  refusals: number;
  /** While set, every message is refused with this reply (a 4xx: try again later; a 5xx: never), at MAIL FROM unless `at` says otherwise. */
  refuse: { code: number; message: string; at?: 'MAIL FROM' | 'RCPT TO' | 'DATA' } | undefined;
  /** While set, each message is received in full and answered only once this resolves (a slow server). */
  hold: Promise<void> | undefined;
  /** Messages received and not answered yet (waiting for `hold`). */
  held: number;
  /** The e-mails that reached one address. */
  to(address: string): ReceivedMail[];
  stop(): Promise<void>;
  /** Starts again on the same port after stop(). */
  start(): Promise<void>;
}

const USER = 'alerts';
const PASSWORD = 'smtp-secret-p4ss';

export interface SmtpServerOptions {
  /** Offer STARTTLS (the test CA's certificate for the loopback names) and refuse a login before it. */
  startTls?: boolean;
  /** TLS from the first byte (an `smtps://` server, port 465's kind), with the same certificate. */
  implicitTls?: boolean;
}

export async function startSmtpServer(options: SmtpServerOptions = {}): Promise<TestSmtpServer> {
  let server: SMTPServer;
  const state: TestSmtpServer = {
    url: '',
    logins: { total: 0, secure: 0 },
    port: 0,
    mails: [],
    refusals: 0,
    refuse: undefined,
    hold: undefined,
    held: 0,
    to: (address) => state.mails.filter((mail) => mail.to.includes(address.toLowerCase())),
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
      }),
    start: () => listen(state.port),
  };
  const refusal = (at: 'MAIL FROM' | 'RCPT TO' | 'DATA'): (Error & { responseCode: number }) | null => {
    if (!state.refuse || (state.refuse.at ?? 'MAIL FROM') !== at) return null;
    state.refusals += 1;
    const error = new Error(state.refuse.message) as Error & { responseCode: number };
    error.responseCode = state.refuse.code;
    return error;
  };
  const create = () =>
    new SMTPServer({
      // Without startTls: plain SMTP on loopback with the login in the URL, as a relay on this machine.
      ...(options.implicitTls
        ? { ...testTlsCredentials(), secure: true, allowInsecureAuth: false }
        : options.startTls
          ? { ...testTlsCredentials(), allowInsecureAuth: false }
          : { disabledCommands: ['STARTTLS'], allowInsecureAuth: true }),
      authOptional: false,
      logger: false,
      onAuth(auth, session, callback) {
        state.logins.total += 1;
        if (session.secure) state.logins.secure += 1;
        if (auth.username === USER && auth.password === PASSWORD) return callback(null, { user: USER });
        state.refusals += 1;
        return callback(new Error('Invalid username or password'));
      },
      onMailFrom(_address, _session, callback) {
        callback(refusal('MAIL FROM'));
      },
      onRcptTo(_address, _session, callback) {
        callback(refusal('RCPT TO'));
      },
      onData(stream, session, callback) {
        const refused = refusal('DATA');
        if (refused) {
          stream.on('end', () => callback(refused));
          stream.resume();
          return;
        }
        simpleParser(stream)
          .then(async (parsed) => {
            if (state.hold) {
              state.held += 1;
              await state.hold;
              state.held -= 1;
            }
            state.mails.push({
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
              subject: parsed.subject ?? '',
              text: parsed.text ?? '',
              html: typeof parsed.html === 'string' ? parsed.html : '',
              headers: parsed.headers as Map<string, unknown>,
            });
            callback();
          })
          .catch(callback);
      },
    });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server = create();
      server.on('error', () => {});
      server.server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        state.port = (server.server.address() as AddressInfo).port;
        state.url = options.implicitTls
          ? `smtps://${USER}:${PASSWORD}@127.0.0.1:${state.port}`
          : `smtp://${USER}:${PASSWORD}@127.0.0.1:${state.port}${options.startTls ? '' : '?starttls=optional'}`;
        resolve();
      });
    });
  await listen(0);
  return state;
}

/** Polls until `count` e-mails have arrived in all (or `match` of them), or fails after `timeoutMs`. */
export async function waitForMails(
  smtp: TestSmtpServer,
  count: number,
  match: (mail: ReceivedMail) => boolean = () => true,
  timeoutMs = 30_000,
): Promise<ReceivedMail[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = smtp.mails.filter(match);
    if (found.length >= count) return found;
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${count} e-mails; got ${found.length}: ${smtp.mails.map((m) => `${m.to} "${m.subject}"`).join('; ')}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
