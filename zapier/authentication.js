'use strict';

const { apiUrl } = require('./base-url');

// Form-encoded, as RFC 6749 §4.1.3 and §6 specify; the client authenticates
// with client_secret_post (credentials in the body).
const requestTokens = async (z, body) => {
  let response;
  try {
    response = await z.request({
      url: apiUrl('/oauth/token'),
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: {
        ...body,
        client_id: process.env.CLIENT_ID,
        client_secret: process.env.CLIENT_SECRET,
      },
    });
  } catch (err) {
    // With autoRefresh the SDK turns every 401 into RefreshAuthError, but a
    // 401 from the token endpoint means the app's own client credentials were
    // refused (invalid_client): refreshing cannot fix that, reconnecting can.
    if (err && err.name === 'RefreshAuthError') {
      throw new z.errors.ExpiredAuthError(
        'Switchboard refused the client credentials (invalid_client): check CLIENT_ID and CLIENT_SECRET, then reconnect the account.',
      );
    }
    throw err;
  }
  const data = response.data || {};
  if (!data.access_token) {
    throw new z.errors.Error('Switchboard answered the token request without an access_token.', 'invalid_token_response', response.status);
  }
  return { access_token: data.access_token, refresh_token: data.refresh_token };
};

const getAccessToken = (z, bundle) => {
  const body = {
    grant_type: 'authorization_code',
    code: bundle.inputData.code,
    redirect_uri: bundle.inputData.redirect_uri,
  };
  // Present when the platform ran the flow with PKCE (enablePkce below).
  if (bundle.inputData.code_verifier) body.code_verifier = bundle.inputData.code_verifier;
  return requestTokens(z, body);
};

// Switchboard rotates refresh tokens: the new one is returned so the
// platform stores it in place of the old one.
const refreshAccessToken = (z, bundle) =>
  requestTokens(z, {
    grant_type: 'refresh_token',
    refresh_token: bundle.authData.refresh_token,
  });

// The connection label reads `json.email` (the profile of docs/interface.md §4.1:
// sub, email, name, organization) from what the test returns. That is the
// response's shape, trimmed: the full response object also carries the
// request with its bearer token and client secret, which do not belong in
// test output.
const test = async (z) => {
  const response = await z.request({ url: apiUrl('/oauth/userinfo'), headers: { accept: 'application/json' } });
  return { status: response.status, json: response.data, data: response.data };
};

module.exports = {
  type: 'oauth2',
  oauth2Config: {
    authorizeUrl: {
      url: '{{process.env.BASE_URL}}/oauth/authorize',
      params: {
        client_id: '{{process.env.CLIENT_ID}}',
        state: '{{bundle.inputData.state}}',
        redirect_uri: '{{bundle.inputData.redirect_uri}}',
        response_type: 'code',
        scope: 'calls:read locations:read',
      },
    },
    getAccessToken,
    refreshAccessToken,
    autoRefresh: true,
    // The platform adds code_challenge (S256) to the authorize URL and hands
    // code_verifier to getAccessToken.
    enablePkce: true,
  },
  fields: [],
  test,
  connectionLabel: '{{json.email}}',
};
