'use strict';

const { apiUrl } = require('../base-url');
const { agentField, locationField, outputFields, sample } = require('../call-fields');

// GET /calls as a search (docs/interface.md §12): by a number on either side
// of the call, an agent and a location; newest first. An empty array is
// Zapier's "not found".
const perform = async (z, bundle) => {
  const { number, agent_id: agentId, location_id: locationId } = bundle.inputData;
  const params = { limit: 10 };
  if (number) params.number = number;
  if (agentId) params.agent_id = agentId;
  if (locationId) params.location_id = locationId;
  const response = await z.request({ url: apiUrl('/calls'), params, headers: { accept: 'application/json' } });
  return response.data;
};

module.exports = {
  key: 'find_call',
  noun: 'Call',
  display: {
    label: 'Find Call',
    description: 'Finds the most recent call from or to a phone number, of an agent or of a location.',
  },
  operation: {
    inputFields: [
      {
        key: 'number',
        label: 'Phone Number',
        required: false,
        helpText: 'The caller or the number called, with its country code, in any spelling (+44 20 7946 0123).',
      },
      agentField('Only calls this agent handled.'),
      locationField('Only calls of this location.'),
    ],
    perform,
    sample: { ...sample, status: 'completed', completed_at: '2026-01-15T14:35:09.000Z' },
    outputFields: [
      ...outputFields,
      { key: 'status', label: 'Status', type: 'string' },
      { key: 'completed_at', label: 'Completed At', type: 'datetime' },
    ],
  },
};
