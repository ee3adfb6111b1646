// What the `switchboard demo` command does, declared in demo.ts and loaded only when
// it runs (command.ts, handler).
import { randomBytes } from 'node:crypto';
import { issueSession } from '../../auth/sessions.service.ts';
import { createCall } from '../../calls/calls.service.ts';
import { createAgent } from '../../calls/agents.service.ts';
import { createClient } from '../../oauth/clients.service.ts';
import { insertOrganization } from '../../organizations/organizations.queries.ts';
import { createUser } from '../../organizations/organizations.service.ts';
import { output, withDatabase, type CommandContext } from '../context.ts';
import { DEFAULT_REDIRECT_URIS } from './demo-client.ts';

// Zapier's redirect URI for CLI-built integrations, and a local one for curl/browser tries.

const SAMPLE_CALLS = [
  { summary: 'Customer reported a leaking kitchen tap; booked a plumber for Tuesday 9:00.', duration_seconds: 184 },
  { summary: 'Quote requested for a boiler replacement in a two-bedroom flat; sent the price list by email.', duration_seconds: 312 },
  { summary: 'Existing customer rescheduled Friday’s inspection to next Monday afternoon.', duration_seconds: 95 },
];

export async function demo(ctx: CommandContext) {
  const suffix = randomBytes(3).toString('hex');
  const flagUris = ctx.flags['redirect-uri'];
  const redirectUris = Array.isArray(flagUris) && flagUris.length ? flagUris : DEFAULT_REDIRECT_URIS;
  const result = await withDatabase(ctx.config, async (pool) => {
    const org = await insertOrganization(pool, `Demo Plumbing ${suffix}`);
    const email = `demo-${suffix}@example.com`;
    const password = randomBytes(12).toString('base64url');
    const user = await createUser(pool, { email, password, organizationId: org.id, name: 'Demo Owner', role: 'owner' });
    const session = await issueSession(pool, user, org.id);
    const agent = await createAgent(pool, org.id, 'Ava (demo agent)');
    const client = await createClient(pool, { name: `Demo automation platform ${suffix}`, redirectUris });
    const calls = [];
    for (const sample of SAMPLE_CALLS) calls.push(await createCall(pool, org.id, { agent_id: agent.id, ...sample }));
    return {
      organization: { id: org.id, name: org.name },
      user: { id: user.id, email, password },
      user_token: session.token,
      agent: { id: agent.id, name: agent.name },
      client: {
        client_id: client.client_id,
        client_secret: client.client_secret,
        redirect_uris: client.redirect_uris,
        scopes: client.scopes,
      },
      calls,
    };
  });
  output(
    ctx,
    result,
    [
      `organization  ${result.organization.id}  ${result.organization.name}`,
      `user          ${result.user.email}  password: ${result.user.password}`,
      `x-user-token  ${result.user_token}`,
      `agent         ${result.agent.id}  ${result.agent.name}`,
      `oauth client  client_id: ${result.client.client_id}`,
      `              client_secret: ${result.client.client_secret}   (shown once)`,
      `              redirect_uris: ${result.client.redirect_uris.join(' ')}`,
      `calls         ${result.calls.length} completed: ${result.calls.map((c) => c.id).join(', ')}`,
    ].join('\n'),
  );
}
