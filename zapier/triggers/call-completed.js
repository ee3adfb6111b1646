'use strict';

const { apiUrl } = require('../base-url');

const EVENT = 'call.completed';

// Interface §4.2; the answer (id, event, callback_url) becomes
// bundle.subscribeData for performUnsubscribe.
const performSubscribe = async (z, bundle) => {
  const response = await z.request({
    url: apiUrl('/webhooks/subscribe'),
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: { hookUrl: bundle.targetUrl, event: EVENT },
  });
  return response.data;
};

// Interface §4.3: removal is by the exact URL that was subscribed, which the
// subscription echoed back as callback_url.
const performUnsubscribe = async (z, bundle) => {
  const subscribed = bundle.subscribeData?.callback_url;
  const response = await z.request({
    url: apiUrl('/webhooks/subscribe'),
    method: 'DELETE',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: { hookUrl: subscribed || bundle.targetUrl },
  });
  return response.data;
};

// The delivery body is the completed call itself (docs/interface.md §2.3, §6), which
// the platform hands over parsed as cleanedRequest. Some runtimes wrap the
// parsed body as {method, headers, querystring, content}; the call is then
// its content.
const perform = async (_z, bundle) => {
  const request = bundle.cleanedRequest || {};
  const wrapped = request.id === undefined && request.content && typeof request.content === 'object' && request.content.id !== undefined;
  return [wrapped ? request.content : request];
};

// Sample data while the Zap is set up: the organization's most recent
// completed calls, in the same shape as a live delivery.
const performList = async (z) => {
  const response = await z.request({ url: apiUrl('/calls/recent'), headers: { accept: 'application/json' } });
  if (!Array.isArray(response.data)) {
    throw new z.errors.Error('Switchboard /calls/recent did not answer with an array.', 'unexpected_response', response.status);
  }
  return response.data;
};

module.exports = {
  key: 'call_completed',
  noun: 'Call',
  display: {
    label: 'Call Completed',
    description: 'Triggers when a call has finished and its summary is available.',
  },
  operation: {
    type: 'hook',
    performSubscribe,
    performUnsubscribe,
    perform,
    performList,
    sample: {
      id: '7f1c5a52-3a51-4c4e-9b77-0c1d2e3f4a5b',
      organization_id: '0b6c2d1e-8f4a-4e39-a1d2-5c6b7a8f9e0d',
      created_at: '2026-01-15T14:32:05.000Z',
      summary: 'Customer asked to reschedule the boiler service to Friday morning; confirmed 9:00.',
      duration_seconds: 184,
      agent_id: '3d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a',
    },
    outputFields: [
      { key: 'id', label: 'Call ID', type: 'string' },
      { key: 'organization_id', label: 'Organization ID', type: 'string' },
      { key: 'created_at', label: 'Created At', type: 'datetime' },
      { key: 'summary', label: 'Summary', type: 'string' },
      { key: 'duration_seconds', label: 'Duration (Seconds)', type: 'integer' },
      { key: 'agent_id', label: 'Agent ID', type: 'string' },
    ],
  },
};
