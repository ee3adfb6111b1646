// The Zapier app in zapier/ loaded the way the Zapier platform loads it: a
// CommonJS module run through zapier-platform-core (createAppHandler for the
// `validate` command the CLI's `zapier validate` sends, createAppTester for
// `zapier test`-style invocations).
import { createHash, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { authorize, UserAgent } from './user-agent.ts';

// zapier-platform-core reads NODE_ENV when it is first loaded: under `test`
// its output checks (trigger returns an array, items have an id, ...) throw
// instead of only logging, as they do under `zapier test`.
process.env.NODE_ENV = 'test';

const require = createRequire(import.meta.url);

type ZapierCore = typeof import('zapier-platform-core');

export const zapier = require('zapier-platform-core') as ZapierCore;
export const zapierAppPath = require.resolve('../../zapier/index.js');

/* eslint-disable @typescript-eslint/no-explicit-any -- the app is plain CommonJS */
export const App = require(zapierAppPath) as any;
export const zapierPackage = require('../../zapier/package.json') as {
  name: string;
  version: string;
  main: string;
  dependencies: Record<string, string>;
};

export const appTester = zapier.createAppTester(App);

/** Invokes one method of the app by its path in the definition, as the platform does. */
export function invoke<T = any>(method: (z: any, bundle: any) => T | Promise<T>, bundle: Record<string, unknown> = {}): Promise<T> {
  return appTester(method, bundle as any) as Promise<T>;
}

/** The schema errors the platform reports for the app (empty when valid). */
export async function validateApp(app: object = App): Promise<unknown[]> {
  const handler = (zapier as any).createAppHandler(app);
  const output = await handler({ command: 'validate', calledFromCli: true });
  return output.results as unknown[];
}

/** Points the app at a Switchboard instance with an OAuth client's credentials (Zapier's env). */
export function useSwitchboard(baseUrl: string, client: { client_id: string; client_secret: string }): void {
  process.env.BASE_URL = baseUrl;
  process.env.CLIENT_ID = client.client_id;
  process.env.CLIENT_SECRET = client.client_secret;
}

/** The redirect URI Zapier registers for a CLI app (App<id>CLIAPI). */
export const ZAPIER_REDIRECT_URI = 'https://zapier.com/dashboard/auth/oauth/return/App123456CLIAPI/';

/**
 * What the platform does to connect an account: render authorizeUrl, add
 * PKCE (enablePkce), send the user through sign-in and consent, read `code`
 * from the redirect and run getAccessToken. Returns the resulting authData.
 */
export async function connectAccount(
  baseUrl: string,
  user: { email: string; password: string },
  options: { pkce?: boolean } = {},
): Promise<{ access_token: string; refresh_token: string }> {
  const { code, verifier } = await authorizeAccount(baseUrl, user, options);
  return invoke(App.authentication.oauth2Config.getAccessToken, {
    inputData: { code, redirect_uri: ZAPIER_REDIRECT_URI, ...(verifier ? { code_verifier: verifier } : {}) },
  });
}

/** The authorization half of connectAccount: the code (and PKCE verifier) the redirect carries. */
export async function authorizeAccount(
  baseUrl: string,
  user: { email: string; password: string },
  options: { pkce?: boolean } = {},
): Promise<{ code: string; verifier?: string; state: string; location: URL }> {
  const state = randomBytes(16).toString('base64url');
  const rendered = await invoke<string>(App.authentication.oauth2Config.authorizeUrl, {
    inputData: { state, redirect_uri: ZAPIER_REDIRECT_URI },
  });
  const url = new URL(rendered);
  let verifier: string | undefined;
  if (options.pkce ?? true) {
    verifier = randomBytes(32).toString('base64url');
    url.searchParams.set('code_challenge', createHash('sha256').update(verifier).digest('base64url'));
    url.searchParams.set('code_challenge_method', 'S256');
  }
  const location = new URL(await authorize(new UserAgent(baseUrl), url.toString(), user));
  const code = location.searchParams.get('code');
  if (!code) throw new Error(`no code in the redirect ${location.toString()}`);
  return { code, state, location, ...(verifier ? { verifier } : {}) };
}
