// The shared page frame of the server-rendered UI (DESIGN §6): one stylesheet,
// no scripts, strict security headers. Pages build their body with html`` and
// send it with sendPage().
import type { FastifyReply } from 'fastify';
import { html, type SafeHtml } from './html.ts';

export const STYLESHEET_PATH = '/assets/web.css';

export interface PageFrame {
  title: string;
  body: SafeHtml;
  /** Shown in the header with a logout button when someone is signed in. */
  session?: { email: string; organizationName: string; csrf: string };
}

export function layout(frame: PageFrame): SafeHtml {
  const header = frame.session
    ? html`<nav class="session">
        <span>${frame.session.email} · ${frame.session.organizationName}</span>
        <a href="/connected-apps">Connected apps</a>
        <form method="post" action="/logout" class="inline">
          <input type="hidden" name="csrf" value="${frame.session.csrf}">
          <button type="submit" class="link">Log out</button>
        </form>
      </nav>`
    : '';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${frame.title} · Switchboard</title>
<link rel="stylesheet" href="${STYLESHEET_PATH}">
</head>
<body>
<header><strong class="brand">Switchboard</strong>${header}</header>
<main>
${frame.body}
</main>
</body>
</html>
`;
}

/**
 * Sends a page with the headers every page carries: no framing (clickjacking
 * on the consent page), no referrer (authorization URLs carry state), no
 * caching, and no script at all. `formTargets` widens form-action for pages
 * whose form submission redirects elsewhere (the consent page redirects to the
 * client, and browsers apply form-action to that redirect too).
 */
export function sendPage(reply: FastifyReply, status: number, page: SafeHtml, options: { formTargets?: string[] } = {}) {
  const formAction = ["'self'", ...(options.formTargets ?? [])].join(' ');
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header(
      'content-security-policy',
      `default-src 'none'; style-src 'self'; img-src 'self'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    )
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-store')
    .send(page.value);
}

export const STYLESHEET = `
:root { color-scheme: light; --ink: #1d2330; --muted: #5b6475; --line: #d9dee7; --accent: #2656d9; --danger: #b42318; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #f5f7fb; }
header { display: flex; align-items: center; justify-content: space-between; padding: 12px 24px; background: #fff; border-bottom: 1px solid var(--line); }
.brand { font-size: 18px; }
nav.session { display: flex; gap: 16px; align-items: center; color: var(--muted); font-size: 14px; }
main { max-width: 560px; margin: 40px auto; padding: 0 16px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 28px; }
h1 { font-size: 22px; margin: 0 0 16px; }
p.lead { color: var(--muted); margin-top: 0; }
label { display: block; font-weight: 600; margin: 16px 0 6px; }
input[type=email], input[type=password], select { width: 100%; padding: 10px 12px; border: 1px solid var(--line); border-radius: 6px; font: inherit; }
button { font: inherit; padding: 10px 18px; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
button.secondary { background: #fff; color: var(--ink); border-color: var(--line); }
button.danger { background: #fff; color: var(--danger); border-color: var(--danger); }
button.link { background: none; border: none; color: var(--accent); padding: 0; }
form.inline { display: inline; margin: 0; }
.actions { display: flex; gap: 12px; margin-top: 24px; }
.error { background: #fef3f2; border: 1px solid #fecdca; color: var(--danger); padding: 10px 12px; border-radius: 6px; }
ul.scopes { padding-left: 20px; }
ul.scopes li { margin: 6px 0; }
ul.scopes code, td code { font-size: 13px; color: var(--muted); }
table { width: 100%; border-collapse: collapse; }
th, td { text-align: left; padding: 10px 6px; border-bottom: 1px solid var(--line); vertical-align: top; }
.muted { color: var(--muted); font-size: 14px; }
`;
