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
type Bundle = import('zapier-platform-core').Bundle;
type ZObject = import('zapier-platform-core').ZObject;

/**
 * A function of the app the platform calls with its z object and a bundle. The
 * app is plain JavaScript, so what it returns is whatever the caller of
 * invoke() says it expects.
 */
export type AppMethod = (z: ZObject, bundle: Bundle) => unknown;

/** The parts of the app definition (zapier/index.js) the tests read or run. */
export interface ZapierApp {
  version: string;
  platformVersion: string;
  authentication: {
    type: string;
    connectionLabel: string;
    test: AppMethod;
    oauth2Config: {
      authorizeUrl: AppMethod;
      getAccessToken: AppMethod;
      refreshAccessToken: AppMethod;
      autoRefresh: boolean;
      enablePkce: boolean;
    };
  };
  beforeRequest: import('zapier-platform-core').BeforeRequestMiddleware[];
  afterResponse: import('zapier-platform-core').AfterResponseMiddleware[];
  triggers: {
    call_completed: {
      key: string;
      display: { label: string; description: string };
      operation: {
        type: string;
        perform: AppMethod;
        performList: AppMethod;
        performSubscribe: AppMethod;
        performUnsubscribe: AppMethod;
        sample: Record<string, unknown> & { created_at: string };
        outputFields: { key: string }[];
      };
    };
  };
}

/** The platform's Lambda entry point, which zapier-platform-core exports but does not declare. */
type AppHandler = (app: object) => (event: { command: 'validate'; calledFromCli: boolean }) => Promise<{ results: unknown[] }>;

export const zapier = require('zapier-platform-core') as ZapierCore & { createAppHandler: AppHandler };
export const zapierAppPath = require.resolve('../../zapier/index.js');

export const App = require(zapierAppPath) as ZapierApp;
export const zapierPackage = require('../../zapier/package.json') as {
  name: string;
  version: string;
  main: string;
  dependencies: Record<string, string>;
};

/**
 * Runs methods of `app` the way the platform does (zapier-platform-core's app
 * tester); T is the answer the caller expects, unchecked, as the app is plain
 * JavaScript.
 */
export function appInvoker(app: object) {
  const tester = zapier.createAppTester(app);
  return <T = unknown>(method: AppMethod, bundle: Record<string, unknown> = {}): Promise<T> =>
    tester(method, bundle as Partial<Bundle>) as Promise<T>;
}

/** Invokes one method of the app by its path in the definition, as the platform does. */
export const invoke = appInvoker(App);

/** The schema errors the platform reports for the app (empty when valid). */
export async function validateApp(app: object = App): Promise<unknown[]> {
  const handler = zapier.createAppHandler(app);
  const output = await handler({ command: 'validate', calledFromCli: true });
  return output.results;
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
