'use strict';

const authentication = require('./authentication');
const middleware = require('./middleware');
const callCompleted = require('./triggers/call-completed');

module.exports = {
  version: require('./package.json').version,
  platformVersion: require('zapier-platform-core').version,

  authentication,
  beforeRequest: [...middleware.befores],
  afterResponse: [...middleware.afters],

  triggers: {
    [callCompleted.key]: callCompleted,
  },
  searches: {},
  creates: {},
  resources: {},
};
