// node bench/profile-stages.js <file.cpuprofile> [--row recent|locations|calls-post] [--top N] [--stage NAME]
//
// Where the server's time went, from a V8 CPU profile of `switchboard serve`
// (BENCH_CPU_PROF=<dir> npm run bench:api): the busy samples summed by stage
// (docs/performance.md, "What a request costs"), by the innermost file of ours
// or of a package, and by function (self time). A sample's stage is the first
// rule matched walking its stack from the leaf up, so node:crypto under
// hashToken counts as authentication and pino's write as logging.
//
// Only the samples from the first routed request on (Fastify's routeHandler)
// after --skip seconds (default 1, the warm-up) are counted. --row keeps the
// samples of one row when one run measured several: rows run one after
// another, and a sample belongs to the row whose handler was last on a stack.
// Each sample counts at most twice the median interval (--wall: as recorded),
// so a thread waiting for a CPU on a busy machine does not charge the wait to
// the function that ran next. The socket write (writev) is a stage of its
// own: bare Fastify pays it as well.
import { readFileSync } from 'node:fs';

const [file, ...args] = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const top = Number(option('--top', 25));
const row = option('--row');
const only = option('--stage');

const STAGES = [
  ['socket write (writev system call)', (f, u) => f === 'writev' && u === ''],
  ['gc', (f) => f === '(garbage collector)'],
  ['V8, unattributed', (f) => f === '(program)'],
  ['auth: token hash', (f, u) => u === 'src/auth/tokens.js' && f === 'hashToken'],
  ['auth: client check', (f) => /^(secretMatches|secretsEqual|checkPlatformAccess)$/.test(f)],
  [
    'auth: principal (cache)',
    (_f, u) =>
      /^src\/(cache\/|auth\/(sessions\.service|user-token\.hook|principal)|oauth\/(tokens\.service|platform-guard|user-or-platform)|calls\/recent-calls|locations\/locations\.service)/.test(
        u,
      ),
  ],
  ['rate limiting', (_f, u) => /^nm:(@fastify\/rate-limit|toad-cache)|^src\/auth\/user-token-rate-limit/.test(u)],
  ['schema compile (once)', (_f, u) => /^nm:ajv\/dist\/(compile|vocabularies|core)|^nm:fast-json-stringify\/index/.test(u)],
  [
    'validation',
    (f, u) =>
      /^nm:ajv|^src\/http\/(validation|reject-|empty-json)|^src\/calls\/(calls\.schemas|call-details)/.test(u) ||
      (u === '' && /^validate\d*$/.test(f)),
  ],
  ['body parse (JSON)', (_f, u) => /content-type-parser|^nm:secure-json-parse/.test(u)],
  ['database: pg driver', (_f, u) => /^nm:(pg|pg-protocol|pg-pool|pg-types|postgres-[a-z]+)\//.test(u)],
  [
    'database: our statements and batching',
    (_f, u) => /^src\/db\/|\.queries\.js$|^src\/calls\/(completed-call-batches|calls\.service|idempotency)/.test(u),
  ],
  ['serialisation', (_f, u) => /^nm:fast-json-stringify|^src\/http\/json-text/.test(u)],
  ['logging', (_f, u) => /^nm:(pino|sonic-boom)|^src\/http\/(logger|request-log)/.test(u)],
  ['trace context', (_f, u) => /^src\/tracing\/|^nm:@opentelemetry/.test(u)],
  ['security headers (onSend)', (_f, u) => u === 'src/app.js'],
  ['metrics', (_f, u) => /^src\/metrics\/|^nm:prom-client/.test(u)],
  [
    'delivery worker (in the process, not the request)',
    (_f, u) => /^src\/(webhooks|ssrf)\/|^nm:undici|^node:(_tls|tls|internal\/tls)/.test(u),
  ],
  ['route handler and other code of ours', (_f, u) => u.startsWith('src/')],
  ['fastify: routing, hooks, reply', (_f, u) => /^nm:(fastify|find-my-way|@fastify)\//.test(u)],
  [
    'node http: parse, headers, streams',
    (_f, u) => /^node:(_http|net|events|stream|internal\/(http|streams|stream_base|timers|process\/task_queues|async_hooks))/.test(u),
  ],
];
/** The markers of --row: the handler of each bench:api row. */
const ROWS = { recent: 'recentCallsForPlatform', locations: 'locationsForSession', 'calls-post': 'recordCall' };

const profile = JSON.parse(readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parentOf = new Map();
for (const n of profile.nodes) for (const child of n.children ?? []) parentOf.set(child, n.id);
const frames = function* (id) {
  for (let at = id; at !== undefined; at = parentOf.get(at)) yield nodes.get(at).callFrame;
};
const short = (url) =>
  url
    .replace(/^file:\/\//, '')
    .replace(/^.*node_modules\//, 'nm:')
    .replace(/^\/.*?\/dist\//, 'src/');

const memo = (fn) => {
  const seen = new Map();
  return (id) => {
    if (!seen.has(id)) seen.set(id, fn(id));
    return seen.get(id);
  };
};
const stageOf = memo((id) => {
  const leaf = nodes.get(id).callFrame;
  if (leaf.functionName === '(idle)') return 'idle';
  for (const frame of frames(id)) {
    const url = short(frame.url);
    const match = STAGES.find(([, test]) => test(frame.functionName, url));
    if (!match) continue;
    // A hash or cache lookup made for the client check or the rate limit belongs to them.
    if (match[0] === 'auth: token hash') {
      for (const up of frames(id)) {
        if (/^(secretMatches|secretsEqual)$/.test(up.functionName)) return 'auth: client check';
        if (up.functionName === 'userTokenRateLimitKey') return 'rate limiting';
      }
    }
    return match[0];
  }
  return `other: ${short(leaf.url) || leaf.functionName}`;
});
const fileOf = memo((id) => {
  for (const frame of frames(id)) {
    const url = short(frame.url);
    if (url.startsWith('src/')) return url;
    if (url.startsWith('nm:'))
      return url
        .split('/')
        .slice(0, url.startsWith('nm:@') ? 2 : 1)
        .join('/');
  }
  const leaf = nodes.get(id).callFrame;
  return `(node) ${short(leaf.url) || leaf.functionName}`;
});
const rowOf = memo((id) => {
  for (const frame of frames(id)) for (const [name, marker] of Object.entries(ROWS)) if (frame.functionName === marker) return name;
  return undefined;
});

const { samples } = profile;
// A sample's delta is the wall time since the previous one: when the machine is busy and the thread waits for a CPU,
// the gap lands on whatever runs next. Capped at twice the median interval, a sample counts about its share of CPU.
const sorted = profile.timeDeltas.slice(1).sort((a, b) => a - b);
const cap = args.includes('--wall') ? Infinity : 2 * (sorted[sorted.length >> 1] ?? 1000);
const timeDeltas = profile.timeDeltas.map((us) => Math.min(us, cap));
let first = samples.findIndex((id) => [...frames(id)].some((f) => f.functionName === 'routeHandler'));
for (let skip = Number(option('--skip', 1)) * 1e6; first >= 0 && first < samples.length && skip > 0; ) skip -= timeDeltas[++first] ?? 0;
const byStage = new Map();
const byFile = new Map();
const byFunction = new Map();
const add = (map, key, us) => map.set(key, (map.get(key) ?? 0) + us);
let busy = 0;
let currentRow;
for (let i = Math.max(first, 0); i < samples.length; i++) {
  const id = samples[i];
  currentRow = rowOf(id) ?? currentRow;
  if (row && currentRow !== row) continue;
  const stage = stageOf(id);
  if (stage === 'idle') continue;
  const us = timeDeltas[i + 1] ?? 0;
  busy += us;
  add(byStage, stage, us);
  add(byFile, fileOf(id), us);
  const leaf = nodes.get(id).callFrame;
  if (!only || stage === only) add(byFunction, `${leaf.functionName || '(anonymous)'}  ${short(leaf.url)}:${leaf.lineNumber + 1}`, us);
}

const print = (title, map) => {
  console.log(`\n== ${title} ==`);
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${((100 * us) / busy).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(6)} ms  ${key}`);
};
console.log(`${file}${row ? ` (row ${row})` : ''}: ${(busy / 1e6).toFixed(2)} s busy`);
print('by stage', byStage);
print('by innermost file of ours or a package', byFile);
print(only ? `self time within ${only}` : 'by function (self time)', byFunction);
