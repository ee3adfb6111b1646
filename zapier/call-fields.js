'use strict';

// What the trigger and the search share: the filter fields a user picks from
// (dropdowns fed by the hidden triggers, never a bare id), how they become a
// request, and the labelled fields of a call (docs/interface.md §2.3).

const locationField = (helpText) => ({
  key: 'location_id',
  label: 'Location',
  dynamic: 'location_list.id.name',
  required: false,
  helpText,
});

const agentField = (helpText) => ({ key: 'agent_id', label: 'Agent', dynamic: 'agent_list.id.name', required: false, helpText });

const filterFields = [
  {
    key: 'direction',
    label: 'Direction',
    required: false,
    choices: { inbound: 'Inbound', outbound: 'Outbound' },
    helpText: 'Only calls that went this way. Leave empty for both.',
  },
  locationField('Only calls of this location. Leave empty for every location.'),
  agentField('Only calls this agent handled. Leave empty for every agent.'),
  {
    key: 'min_duration_seconds',
    label: 'Minimum Duration (Seconds)',
    type: 'integer',
    required: false,
    helpText: 'Only calls at least this long, such as 30 to skip hang-ups.',
  },
];

const FILTER_KEYS = filterFields.map((field) => field.key);

// The filters the user set, as Switchboard takes them: empty fields left out,
// the duration as a number. The same object is sent on subscribe (`filters`)
// and as /calls/recent's query, so performList returns what the hook delivers.
const filtersFrom = (inputData = {}) => {
  const filters = {};
  for (const key of FILTER_KEYS) {
    const value = inputData[key];
    if (value === undefined || value === null || value === '') continue;
    filters[key] = key === 'min_duration_seconds' ? Number(value) : String(value);
  }
  return filters;
};

const outputFields = [
  { key: 'id', label: 'Call ID', type: 'string' },
  { key: 'organization_id', label: 'Organization ID', type: 'string' },
  { key: 'created_at', label: 'Created At', type: 'datetime' },
  { key: 'summary', label: 'Summary', type: 'string' },
  { key: 'duration_seconds', label: 'Duration (Seconds)', type: 'integer' },
  { key: 'agent_id', label: 'Agent ID', type: 'string' },
  { key: 'direction', label: 'Direction', type: 'string' },
  { key: 'from_number', label: 'From Number', type: 'string' },
  { key: 'to_number', label: 'To Number', type: 'string' },
  { key: 'agent_name', label: 'Agent Name', type: 'string' },
  { key: 'location_id', label: 'Location ID', type: 'string' },
  { key: 'location_name', label: 'Location Name', type: 'string' },
  { key: 'recording_url', label: 'Recording URL', type: 'string' },
  { key: 'transcript', label: 'Transcript', type: 'string' },
  { key: 'metadata', label: 'Metadata' },
  { key: 'url', label: 'Call Page URL', type: 'string' },
];

const sample = {
  id: '7f1c5a52-3a51-4c4e-9b77-0c1d2e3f4a5b',
  organization_id: '0b6c2d1e-8f4a-4e39-a1d2-5c6b7a8f9e0d',
  created_at: '2026-01-15T14:32:05.000Z',
  summary: 'Customer asked to reschedule the boiler service to Friday morning; confirmed 9:00.',
  duration_seconds: 184,
  agent_id: '3d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a',
  direction: 'inbound',
  from_number: '+442079460123',
  to_number: '+442079460999',
  agent_name: 'Front desk',
  location_id: '5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d',
  location_name: 'Leeds',
  recording_url: 'https://recordings.example.com/7f1c5a52.mp3',
  transcript: 'Caller: Hello, I need to move my boiler service…',
  metadata: { crm_contact_id: 'C-1042' },
  url: 'https://switchboard.example.com/ui/calls/7f1c5a52-3a51-4c4e-9b77-0c1d2e3f4a5b',
};

module.exports = { filterFields, filtersFrom, locationField, agentField, outputFields, sample };
