// Helpers for the web UI's HTTP-level tests: a signed-in cookie-keeping agent,
// the CSRF token of a page, and the message shown next to a form field.
import assert from 'node:assert/strict';
import { PASSWORD } from './fixtures.ts';
import { hiddenInputs, UserAgent } from './user-agent.ts';

export async function signedInAgent(baseUrl: string, email: string): Promise<UserAgent> {
  const agent = new UserAgent(baseUrl);
  const login = await agent.get('/login');
  const res = await agent.post('/login', { ...hiddenInputs(login.body, '/login'), email, password: PASSWORD });
  assert.equal(res.status, 303, 'signed in');
  return agent;
}

/** The CSRF token the agent's current cookie expects (read from any signed-in page). */
export async function csrfToken(agent: UserAgent): Promise<string> {
  const page = await agent.get('/ui/locations');
  const match = /name="csrf" value="([^"]+)"/.exec(page.body);
  assert.ok(match, 'the page carries a CSRF token');
  return match[1]!;
}

/** The validation message rendered beside `field`, or undefined. */
export function fieldError(html: string, field: string): string | undefined {
  return new RegExp(`<p class="field-error" id="${field}-error">([^<]*)</p>`).exec(html)?.[1];
}
