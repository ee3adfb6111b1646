'use strict';

const authentication = require('./authentication');
const middleware = require('./middleware');
const callCompleted = require('./triggers/call-completed');
const { agentList, locationList } = require('./triggers/lists');
const findCall = require('./searches/find-call');

module.exports = {
  version: require('./package.json').version,
  platformVersion: require('zapier-platform-core').version,

  authentication,
  beforeRequest: [...middleware.befores],
  afterResponse: [...middleware.afters],

  triggers: {
    [callCompleted.key]: callCompleted,
    [locationList.key]: locationList,
    [agentList.key]: agentList,
  },
  searches: {
    [findCall.key]: findCall,
  },
  creates: {},
  resources: {},
};
