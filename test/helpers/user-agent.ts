// A minimal cookie-keeping user agent over real HTTP (fetch, no redirects
// followed automatically), to walk the login and consent pages the way a
// browser without JavaScript would. The Chromium test covers real rendering.
export interface Page {
  status: number;
  location: string | undefined;
  body: string;
  headers: Headers;
}

export class UserAgent {
  readonly cookies = new Map<string, string>();
  readonly baseUrl: string;
  constructor(baseUrl: string) {
    this.baseUrl = baseUrl;
  }

  private remember(headers: Headers) {
    for (const line of headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async request(method: 'GET' | 'POST', pathOrUrl: string, form?: Record<string, string>): Promise<Page> {
    const url = new URL(pathOrUrl, this.baseUrl);
    const headers: Record<string, string> = {};
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(url, { method, headers, redirect: 'manual', ...(form ? { body: new URLSearchParams(form).toString() } : {}) });
    this.remember(res.headers);
    return { status: res.status, location: res.headers.get('location') ?? undefined, body: await res.text(), headers: res.headers };
  }

  get(path: string) {
    return this.request('GET', path);
  }

  post(path: string, form: Record<string, string>) {
    return this.request('POST', path, form);
  }
}

function decode(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** The hidden inputs of the form posting to `action`, as a browser would submit them. */
export function hiddenInputs(html: string, action: string): Record<string, string> {
  const start = html.indexOf(`action="${action}"`);
  if (start < 0) throw new Error(`no form posting to ${action}`);
  const form = html.slice(start, html.indexOf('</form>', start));
  const fields: Record<string, string> = {};
  for (const match of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[decode(match[1]!)] = decode(match[2]!);
  }
  return fields;
}

/**
 * Signs in (if asked) and answers the consent page for an authorization URL.
 * Returns the final redirect to the client (its Location).
 */
export async function authorize(
  agent: UserAgent,
  authorizationUrl: string,
  options: { email: string; password: string; decision?: 'allow' | 'deny'; organizationId?: string },
): Promise<string> {
  let page = await agent.get(authorizationUrl);
  if (page.status === 302 && page.location?.startsWith('/login')) {
    const login = await agent.get(page.location);
    const fields = hiddenInputs(login.body, '/login');
    const signedIn = await agent.post('/login', { ...fields, email: options.email, password: options.password });
    if (signedIn.status !== 303) throw new Error(`login failed: ${signedIn.status}`);
    page = await agent.get(signedIn.location!);
  }
  if (page.status !== 200) {
    if (page.location) return page.location;
    throw new Error(`authorization page answered ${page.status}: ${page.body.slice(0, 300)}`);
  }
  const fields = hiddenInputs(page.body, '/oauth/authorize');
  if (options.organizationId) fields.organization_id = options.organizationId;
  const decided = await agent.post('/oauth/authorize', { ...fields, decision: options.decision ?? 'allow' });
  if (decided.status !== 303 || !decided.location) throw new Error(`consent answered ${decided.status}: ${decided.body.slice(0, 300)}`);
  return decided.location;
}
