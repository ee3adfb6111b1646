'use strict';

const { apiUrl } = require('../base-url');

// Hidden triggers that feed the Location and Agent dropdowns (`dynamic:
// 'location_list.id.name'`): GET /locations (scope locations:read) and
// GET /agents (calls:read) answer [{id, name, …}].
const listOf = (key, noun, path) => ({
  key,
  noun,
  display: { label: `List ${noun}s`, description: `Lists the organization's ${noun.toLowerCase()}s for a dropdown.`, hidden: true },
  operation: {
    perform: async (z) => {
      const response = await z.request({ url: apiUrl(path), headers: { accept: 'application/json' } });
      return response.data.map((item) => ({ id: item.id, name: item.name }));
    },
    sample: { id: '5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d', name: `A ${noun.toLowerCase()}` },
    outputFields: [
      { key: 'id', label: `${noun} ID`, type: 'string' },
      { key: 'name', label: 'Name', type: 'string' },
    ],
  },
});

module.exports = {
  locationList: listOf('location_list', 'Location', '/locations'),
  agentList: listOf('agent_list', 'Agent', '/agents'),
};
