'use strict';

// The Switchboard instance this app talks to. Read on every call, not at load
// time: the Zapier runtime copies the app's environment into process.env at
// the start of each invocation.
const baseUrl = () => {
  const value = (process.env.BASE_URL || '').trim().replace(/\/+$/, '');
  if (!value) {
    throw new Error(
      'BASE_URL is not set: set it to the public URL of the Switchboard instance (for example `zapier-platform env:set 1.0.0 BASE_URL=https://switchboard.example.com`).',
    );
  }
  return value;
};

const apiUrl = (path) => `${baseUrl()}${path}`;

// Requests to the token endpoint authenticate the client in the body; they
// must not carry the (possibly expired) bearer token.
const isTokenEndpoint = (url) => {
  try {
    const target = new URL(url);
    const token = new URL(apiUrl('/oauth/token'));
    return target.origin === token.origin && target.pathname === token.pathname;
  } catch {
    return false;
  }
};

// Credentials only ever go to the configured Switchboard origin, never to a
// URL that happens to be requested from the same app (a redirect target, a
// mistyped host).
const isSwitchboardUrl = (url) => {
  let base;
  let target;
  try {
    base = new URL(baseUrl());
    target = new URL(url);
  } catch {
    return false;
  }
  const basePath = base.pathname.replace(/\/+$/, '');
  return target.origin === base.origin && (basePath === '' || target.pathname === basePath || target.pathname.startsWith(`${basePath}/`));
};

module.exports = { baseUrl, apiUrl, isTokenEndpoint, isSwitchboardUrl };
