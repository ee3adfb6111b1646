'use strict';

const { isSwitchboardUrl, isTokenEndpoint } = require('./base-url');

const headerNames = (headers) => Object.keys(headers || {}).map((name) => name.toLowerCase());

// Interface §5.1: every platform request carries the bearer token and the
// app's own client credentials. They are added only for the configured
// Switchboard origin, and never to the token endpoint, which authenticates
// the client in the body and must not see an old access token.
const addSwitchboardCredentials = (request, _z, bundle) => {
  if (!isSwitchboardUrl(request.url) || isTokenEndpoint(request.url)) return request;
  request.headers = request.headers || {};
  const present = headerNames(request.headers);
  const accessToken = bundle.authData?.access_token;
  if (accessToken && !present.includes('authorization')) {
    request.headers.Authorization = `Bearer ${accessToken}`;
  }
  if (process.env.CLIENT_ID && !present.includes('x-client-id')) {
    request.headers['x-client-id'] = process.env.CLIENT_ID;
  }
  if (process.env.CLIENT_SECRET && !present.includes('x-client-secret')) {
    request.headers['x-client-secret'] = process.env.CLIENT_SECRET;
  }
  return request;
};

// A problem+json body (RFC 9457, whose `errors` name the fields) or an OAuth
// error body (RFC 6749 §5.2), as one readable line.
const describeError = (response) => {
  const data = response.data;
  if (!data || typeof data !== 'object') return `Switchboard answered ${response.status}`;
  if (typeof data.detail === 'string' || typeof data.title === 'string') {
    const parts = [data.detail || data.title];
    if (Array.isArray(data.errors)) {
      for (const item of data.errors) {
        // A detail that already says the field's message is not repeated.
        if (item?.field && !parts[0].includes(item.message)) parts.push(`${item.field}: ${item.message}`);
      }
    }
    return parts.join(' | ');
  }
  if (typeof data.error === 'string') {
    return data.error_description ? `${data.error}: ${data.error_description}` : data.error;
  }
  return `Switchboard answered ${response.status}`;
};

const errorCode = (response) => {
  const data = response.data;
  if (data && typeof data === 'object') {
    if (typeof data.code === 'string') return data.code;
    if (typeof data.error === 'string') return data.error;
  }
  return `HTTP_${response.status}`;
};

const handleSwitchboardErrors = (response, z) => {
  // Token-endpoint answers are left to the SDK: a 4xx while refreshing is how
  // the platform learns that the connection has gone stale.
  if (!isSwitchboardUrl(response.request.url) || isTokenEndpoint(response.request.url)) return response;
  if (response.status === 401) {
    // Expired, revoked or otherwise refused access token: ask the platform to
    // run refreshAccessToken and retry (autoRefresh already does this before
    // this middleware runs; kept so the app is correct without it).
    throw new z.errors.RefreshAuthError('The Switchboard access token was refused; refreshing it.');
  }
  if (response.status >= 400 && response.status < 500 && response.status !== 429) {
    throw new z.errors.Error(describeError(response), errorCode(response), response.status);
  }
  return response;
};

module.exports = {
  befores: [addSwitchboardCredentials],
  afters: [handleSwitchboardErrors],
};
