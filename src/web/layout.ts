// The shared page frame of the server-rendered UI (docs/interface.md §14): one stylesheet,
// no scripts, strict security headers. Pages build their body with html`` and
// send it with sendPage(). Signed-in pages carry the navigation bar with the
// organization switcher; the OAuth pages keep a minimal header.
import { isOwnerOrAdmin } from '../organizations/roles.ts';
import type { FastifyReply } from 'fastify';
import { html, type SafeHtml } from './html.ts';
import { STYLESHEET_PATH } from './stylesheet.ts';

export { STYLESHEET, STYLESHEET_PATH } from './stylesheet.ts';

export const SECTIONS = [
  { id: 'home', label: 'Home', path: '/' },
  { id: 'locations', label: 'Locations', path: '/ui/locations' },
  { id: 'service-areas', label: 'Service areas', path: '/ui/service-areas' },
  { id: 'calls', label: 'Calls', path: '/ui/calls' },
  { id: 'webhooks', label: 'Webhooks', path: '/ui/webhooks' },
  { id: 'connected-apps', label: 'Connected apps', path: '/connected-apps' },
  { id: 'activity', label: 'Activity', path: '/ui/activity' },
] as const;
/** Sections only some roles see (the audit log is for owners and admins). */
const SECTION_ROLES: Partial<Record<Section, (role: string | undefined) => boolean>> = { activity: isOwnerOrAdmin };
export type Section = (typeof SECTIONS)[number]['id'];

/** What the navigation bar needs to know about the signed-in user. */
export interface Navigation {
  email: string;
  csrf: string;
  organizationId: string;
  organizationName: string;
  organizations: { id: string; name: string }[];
  /** The section the page belongs to (highlighted; where the switcher returns to). */
  current?: Section;
  /** The user's role in the organization: which sections the bar shows. */
  role?: string;
}

export interface PageFrame {
  title: string;
  body: SafeHtml;
  /** A signed-in page: navigation bar, organization switcher, log out. */
  nav?: Navigation;
  /** Shown in the header with a logout button (the OAuth consent page). */
  session?: { email: string; organizationName: string; csrf: string };
  /** Tables need more room than the sign-in and consent cards. */
  wide?: boolean;
}

function logoutForm(csrf: string) {
  return html`<form method="post" action="/logout" class="inline">
          <input type="hidden" name="csrf" value="${csrf}">
          <button type="submit" class="link">Log out</button>
        </form>`;
}

function switcher(nav: Navigation) {
  if (nav.organizations.length < 2) return html`<span>${nav.organizationName}</span>`;
  const returnTo = SECTIONS.find((s) => s.id === nav.current)?.path ?? '/';
  return html`<form method="post" action="/ui/organization" class="switcher">
          <input type="hidden" name="csrf" value="${nav.csrf}">
          <input type="hidden" name="return_to" value="${returnTo}">
          <label for="switch-organization" class="visually-hidden">Organization</label>
          <select id="switch-organization" name="organization_id">
            ${nav.organizations.map((o) => html`<option value="${o.id}"${o.id === nav.organizationId ? html` selected` : ''}>${o.name}</option>`)}
          </select>
          <button type="submit" class="secondary">Switch</button>
        </form>`;
}

function navigationBar(nav: Navigation) {
  return html`<nav class="sections" aria-label="Sections">
        ${SECTIONS.filter((s) => SECTION_ROLES[s.id]?.(nav.role) ?? true).map(
          (s) => html`<a href="${s.path}"${s.id === nav.current ? html` aria-current="page"` : ''}>${s.label}</a>`,
        )}
      </nav>
      <nav class="session" aria-label="Account">
        ${switcher(nav)}
        <span class="who" title="${nav.email}">${nav.email}</span>
        ${logoutForm(nav.csrf)}
      </nav>`;
}

export function layout(frame: PageFrame): SafeHtml {
  const header = frame.nav
    ? navigationBar(frame.nav)
    : frame.session
      ? html`<nav class="session">
        <span>${frame.session.email} · ${frame.session.organizationName}</span>
        <a href="/connected-apps">Connected apps</a>
        ${logoutForm(frame.session.csrf)}
      </nav>`
      : '';
  const brand = frame.nav
    ? html`<a href="/" class="brand"><strong>Switchboard</strong></a>`
    : html`<strong class="brand">Switchboard</strong>`;
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
<header>${brand}${header}</header>
<main${frame.wide ? html` class="wide"` : ''}>
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
