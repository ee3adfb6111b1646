'use strict';

const { apiUrl } = require('../base-url');
const { filterFields, filtersFrom, outputFields, sample } = require('../call-fields');

const EVENT = 'call.completed';

// Interface §4.2; the answer (id, event, callback_url, filters) becomes
// bundle.subscribeData for performUnsubscribe. Each Zap has its own target
// URL, so Zaps on this trigger never overwrite each other's filters.
const performSubscribe = async (z, bundle) => {
  const response = await z.request({
    url: apiUrl('/webhooks/subscribe'),
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: { hookUrl: bundle.targetUrl, event: EVENT, filters: filtersFrom(bundle.inputData) },
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
// completed calls that the Zap's filters let through, in the same shape as a
// live delivery.
const performList = async (z, bundle) => {
  const response = await z.request({
    url: apiUrl('/calls/recent'),
    params: filtersFrom(bundle.inputData),
    headers: { accept: 'application/json' },
  });
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
    description:
      'Triggers when a call has finished and its summary is available, optionally only for a direction, location, agent or minimum length.',
  },
  operation: {
    type: 'hook',
    performSubscribe,
    performUnsubscribe,
    perform,
    performList,
    inputFields: filterFields,
    sample,
    outputFields,
  },
};
