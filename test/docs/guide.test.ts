// docs/guide.md and the README's five-minute path, run as written, so an edit
// that breaks a step fails here. The convention the documents follow:
// - every ```sh block runs, in document order, in one bash session (set -eu),
//   from the repository root, so each block sees the variables of the blocks
//   before it, as the reader's shell does;
// - a block after `<!-- doc-test: server -->` runs in a terminal of its own:
//   in the background, and the run waits for "Switchboard listening on"; a
//   server still running from an earlier block keeps running (and holds its
//   port, as it would for the reader);
// - a block after `<!-- doc-test: restart -->` runs in the terminal of the
//   server started last, after stopping that server with SIGINT, as Ctrl-C
//   does (the document says so where the reader does it);
// - a block after `<!-- doc-test: skip ... -->` does not run (the reason
//   follows "skip"); ```text blocks are never commands.
// The shell runs on a pseudo-terminal, as the reader's does, and the checks
// read what that terminal shows: npm's spinner (npx) erases the line it draws
// on, and a line erased before the reader saw it fails the run.
// What the run changes so it can share the machine: the documents' ports 3000
// and 8443 and the /tmp/sb-dev-tls directory become free ports and a temporary
// directory, and DATABASE_URL and DATA_DIR name this file's database and a
// temporary directory (the reader's server has its own embedded database).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDataDir } from '../helpers/cli.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { renderTerminal } from '../helpers/terminal.ts';
import { freePort } from '../../src/free-port.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// A run starts about 40 processes (the CLI, npx, curl); on a loaded machine that takes minutes.
const RUN_TIMEOUT_MS = 480_000;
const MARKER = /^<!-- doc-test: (\w+)(.*)-->$/;

export interface DocBlock {
  /** 1-based line of the opening fence. */
  line: number;
  mode: 'run' | 'server' | 'restart' | 'skip';
  code: string;
}

/** The ```sh blocks of a Markdown document, with the marker that precedes each. */
export function shellBlocks(markdown: string, file: string): DocBlock[] {
  const lines = markdown.split('\n');
  const blocks: DocBlock[] = [];
  let marker: DocBlock['mode'] | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const markerMatch = MARKER.exec(line.trim());
    if (markerMatch) {
      const mode = markerMatch[1] as DocBlock['mode'];
      if (!['server', 'restart', 'skip'].includes(mode)) throw new Error(`${file}:${i + 1}: unknown doc-test marker "${mode}"`);
      if (mode === 'skip' && !markerMatch[2]!.trim()) throw new Error(`${file}:${i + 1}: doc-test skip needs a reason`);
      marker = mode;
      continue;
    }
    const fence = /^```(\S*)/.exec(line);
    if (!fence) continue;
    const language = fence[1]!;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !lines[i]!.startsWith('```'); i++) body.push(lines[i]!);
    if (i === lines.length) throw new Error(`${file}:${start + 1}: unclosed code block`);
    if (['bash', 'shell', 'console', 'zsh'].includes(language)) {
      throw new Error(`${file}:${start + 1}: shell blocks are \`sh\` (run by this test) or \`text\` (not run), not "${language}"`);
    }
    if (language === 'sh') blocks.push({ line: start + 1, mode: marker ?? 'run', code: body.join('\n') });
    else if (marker) throw new Error(`${file}:${start + 1}: a doc-test marker only applies to an sh block`);
    marker = undefined;
  }
  return blocks;
}

/**
 * The curl commands of a block whose answer goes to the terminal and ends
 * there without a newline (no `-w '…\n'`). A reader's terminal glues the next
 * output to such a line, or npm's spinner (npx) erases it: an answer in the
 * documents ends its line.
 */
export function curlsWithoutNewline(code: string): string[] {
  const found: string[] = [];
  for (const line of code.replace(/\s*\\\n\s*/g, ' ').split('\n')) {
    // The line's commands, split outside quotes at ; && || | & and cut at a comment.
    const commands: { text: string; piped: boolean }[] = [];
    let quote: string | undefined;
    let text = '';
    for (let i = 0; i < line.length; i++) {
      const char = line[i]!;
      if (quote) {
        if (char === quote) quote = undefined;
        text += char;
      } else if (char === "'" || char === '"') {
        quote = char;
        text += char;
      } else if (char === '#' && /\s$/.test(text)) {
        break;
      } else if (';&|'.includes(char)) {
        const double = ['&&', '||'].includes(line.slice(i, i + 2));
        if (double) i++;
        commands.push({ text: text.trim(), piped: !double && char === '|' });
        text = '';
      } else {
        text += char;
      }
    }
    commands.push({ text: text.trim(), piped: false });
    for (const command of commands) {
      if (!/^curl\s/.test(command.text) || command.piped) continue;
      const unquoted = command.text.replace(/'[^']*'|"[^"]*"/g, "''");
      if (/\s(-o|--output)\s|>/.test(unquoted)) continue;
      if (/\s(-w|--write-out)\s+('[^']*\\n'|"[^"]*\\n")/.test(command.text)) continue;
      found.push(command.text);
    }
  }
  return found;
}

export interface DocRun {
  code: number | null;
  /** What the shell's terminal showed (stdout and stderr, the background target's output included). */
  output: string;
  /** Lines the terminal erased before the reader could read them (npm's spinner), in order. */
  wiped: string[];
  /** Each server block's output, in order. */
  serverOutputs: string[];
  blocksRun: number;
}

/**
 * The shell runs on a pseudo-terminal (util-linux `script`), as the reader's
 * does: npx draws its spinner only when stdout and stderr are terminals.
 */
const SCRIPT = '/usr/bin/script';

/**
 * Runs `file`'s shell blocks as described at the top of this file. Once the
 * shell is done, the server and the target run on until the output matches
 * `until` and `recorded()` holds (the worker has written the outcome of what
 * the target printed), up to 60 s, and are then stopped.
 */
async function runDocument(file: string, db: TestDatabase, until?: RegExp, recorded?: () => Promise<boolean>): Promise<DocRun> {
  const work = await mkdtemp(path.join(os.tmpdir(), 'switchboard-doc-'));
  const tlsDir = path.join(work, 'tls');
  const dataDir = await tempDataDir();
  const [apiPort, targetPort] = [await freePort(), await freePort()];
  const localize = (code: string) =>
    code
      .replace(/(localhost|127\.0\.0\.1):3000\b/g, `$1:${apiPort}`)
      .replace(/\b8443\b/g, String(targetPort))
      .replaceAll('/tmp/sb-dev-tls', tlsDir);
  const shellPid = path.join(work, 'shell.pid');
  const serverPids = path.join(work, 'servers.pid');

  const blocks = shellBlocks(await readFile(path.join(ROOT, file), 'utf8'), file);
  const servers: string[] = [];
  const script = [
    'exec 2>&1', // one stream, so the output reads in the order things happened
    `echo $$ > ${JSON.stringify(shellPid)}`,
    'set -eu',
    `trap 'echo "doc-test: ${file} failed in the block at line $DOC_LINE (status $?)" >&2' ERR`,
    'DOC_SERVER=',
    'doc_stop_server() {',
    '  kill -INT -- "-$DOC_SERVER" 2>/dev/null || true; wait "$DOC_SERVER" || true; DOC_SERVER=',
    '}',
    'doc_start_server() {',
    '  setsid bash "$1" > "$2" 2>&1 &',
    '  DOC_SERVER=$!',
    `  echo "$DOC_SERVER" >> ${JSON.stringify(serverPids)}`,
    '  until grep -q "Switchboard listening on" "$2"; do',
    '    kill -0 "$DOC_SERVER" 2>/dev/null || { echo "doc-test: the server stopped:" >&2; cat "$2" >&2; return 1; }',
    '    sleep 0.2',
    '  done',
    '}',
  ];
  let blocksRun = 0;
  for (const block of blocks) {
    if (block.mode === 'skip') continue;
    blocksRun++;
    script.push(`DOC_LINE=${block.line}`);
    if (block.mode === 'server' || block.mode === 'restart') {
      if (block.mode === 'restart' && servers.length === 0) throw new Error(`${file}:${block.line}: restart, but no server runs`);
      const serverScript = path.join(work, `server-${servers.length}.sh`);
      const log = path.join(work, `server-${servers.length}.log`);
      await writeFile(serverScript, `${localize(block.code)}\n`);
      servers.push(log);
      if (block.mode === 'restart') script.push('doc_stop_server');
      script.push(`doc_start_server ${JSON.stringify(serverScript)} ${JSON.stringify(log)}`);
    } else {
      // Each block reads no input of ours: the reader types it at a terminal.
      script.push(`printf '\\ndoc-test: block at ${file}:${block.line} (%s s)\\n' "$SECONDS"`, `{\n${localize(block.code)}\n} < /dev/null`);
    }
  }
  // The reader's terminals stay open: the shell waits for its background jobs (the target) until stopped.
  script.push(`printf '\\ndoc-test: done\\n'`, 'wait');
  const scriptFile = path.join(work, 'doc.sh');
  await writeFile(scriptFile, `${script.join('\n')}\n`);

  const env: NodeJS.ProcessEnv = {
    PATH: `${path.dirname(process.execPath)}:${process.env.PATH}`,
    HOME: process.env.HOME,
    TERM: 'xterm',
    LANG: 'C.UTF-8',
    DATABASE_URL: db.url,
    DATA_DIR: dataDir,
    PORT: String(apiPort),
    LOG_LEVEL: 'warn',
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
  };
  const [command, args] = existsSync(SCRIPT)
    ? [SCRIPT, ['--quiet', '--return', '--command', `bash ${scriptFile}`, '/dev/null']]
    : ['bash', [scriptFile]];
  const shell = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let raw = '';
  shell.stdout.on('data', (chunk) => (raw += chunk));
  shell.stderr.on('data', (chunk) => (raw += chunk));
  let exitCode: number | null | undefined;
  shell.on('exit', (code) => (exitCode = code));
  const done = () => raw.includes('doc-test: done');
  while (exitCode === undefined && !done()) await new Promise((resolve) => setTimeout(resolve, 200));
  const code = done() ? 0 : exitCode!;
  const deadline = Date.now() + 60_000;
  while (code === 0 && until && !until.test(renderTerminal(raw).text) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  while (code === 0 && recorded && !(await recorded()) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  // Then the shell's background jobs (the target) and the servers stop, whatever state the run left.
  const groups = [shell.pid!];
  for (const file of [shellPid, serverPids]) {
    for (const pid of (await readFile(file, 'utf8').catch(() => '')).split('\n')) if (pid.trim()) groups.push(Number(pid));
  }
  for (const group of groups) {
    try {
      process.kill(-group, 'SIGKILL');
    } catch {}
  }
  const serverOutputs = await Promise.all(servers.map((log) => readFile(log, 'utf8').catch(() => '')));
  await rm(work, { recursive: true, force: true });
  await rm(dataDir, { recursive: true, force: true });
  const screen = renderTerminal(raw);
  return { code, output: screen.text, wiped: screen.wiped, serverOutputs, blocksRun };
}

/** The summaries of the calls whose delivery succeeded. */
async function deliveredSummaries(db: TestDatabase): Promise<string[]> {
  const { rows } = await db.pool.query<{ summary: string }>(
    `SELECT c.summary FROM webhook_deliveries d JOIN calls c ON c.id = d.call_id WHERE d.status = 'succeeded' ORDER BY c.created_at`,
  );
  return rows.map((row) => row.summary);
}

// What the documents' target prints for their first delivery.
const FIRST_DELIVERY = /POST \/hook \{.*"x-event":"call\.completed".*\} \{.*"summary":"Booked a boiler service for Tuesday 9am"/;
const README_DELIVERY = /POST \/hook \{.*"x-event":"call\.completed".*\} \{.*"summary":"My first delivered call"/;

function explain(run: DocRun): string {
  return `${run.output}\n--- server output ---\n${run.serverOutputs.join('\n---\n')}`;
}

describe('the documents run as written, each against a fresh server on a database of its own', () => {
  const databases: TestDatabase[] = [];
  const freshDatabase = async () => {
    const db = await createTestDatabase();
    databases.push(db);
    return db;
  };
  after(() => Promise.all(databases.map((db) => db.drop())));

  test('docs/guide.md: every step runs, and the first delivery arrives', { timeout: RUN_TIMEOUT_MS }, async () => {
    const db = await freshDatabase();
    const run = await runDocument('docs/guide.md', db, FIRST_DELIVERY);
    assert.equal(run.code, 0, explain(run));
    assert.match(run.output, /doc-test: done/);
    assert.deepEqual(run.wiped, [], 'lines the terminal erased before the reader saw them');
    assert.equal(run.serverOutputs.length, 2, 'the guide starts the server, then restarts it for the HTTPS target');
    // The session the login made, as the reader's terminal shows it (the next command is an npx).
    assert.match(run.output, /^\{"expires_at":"[^"]+","user":\{[^}]*"email":"ada@example\.com"/m, explain(run));
    // "A second organization, its owner": the user made there owns it.
    const { rows: roles } = await db.pool.query<{ role: string }>(
      `SELECT m.role FROM memberships m JOIN users u ON u.id = m.user_id WHERE u.email = 'owner@brightspark.test'`,
    );
    assert.deepEqual(
      roles.map((row) => row.role),
      ['owner'],
    );
    // The target (the guide's own, on its own CA) printed the delivery.
    assert.match(run.output, FIRST_DELIVERY, explain(run));
    // The redelivery: the same delivery id again, as attempt 2 (the guide unsubscribes at its end,
    // which removes the subscription's deliveries from the database, so the target's log is the record).
    const redelivered = /POST \/hook \{.*"x-delivery-id":"([^"]+)","x-delivery-attempt":"2"/.exec(run.output);
    assert.ok(redelivered, explain(run));
    assert.ok(run.output.includes(`"x-delivery-id":"${redelivered[1]}","x-delivery-attempt":"1"`));
    // "A Zap that only wants inbound calls": the filtered URL got the inbound call and nothing else,
    // while the unfiltered one got the outbound call too; /calls/recent filters the same way.
    const inbound = run.output.match(/POST \/inbound \{.*/g) ?? [];
    assert.equal(inbound.length, 1, explain(run));
    assert.match(inbound[0]!, /"summary":"Wants a quote for a new boiler",.*"direction":"inbound","from_number":"\+442079460123"/);
    assert.match(run.output, /POST \/hook \{.*"summary":"Confirmed Tuesday 9am",.*"direction":"outbound"/, explain(run));
    assert.match(run.output, /^Wants a quote for a new boiler from \+442079460123$/m, explain(run));
    // The broken receiver: the attempt after the target stopped is retried, and the circuit reports it.
    assert.match(run.output, /"error":"connection".*"outcome":"retrying"/, explain(run));
    assert.match(run.output, /\{"state":"closed",.*"consecutive_failures":1/);
    // The web UI part ran against the same organization the tour set up.
    assert.match(run.output, /<strong>Head office<\/strong> <span class="badge">Primary<\/span>/);
    assert.match(run.output, /No locations yet/);
  });

  test('README.md: the five-minute path reaches a first delivery', { timeout: RUN_TIMEOUT_MS }, async () => {
    const db = await freshDatabase();
    const delivered = async () => (await deliveredSummaries(db)).includes('My first delivered call');
    const run = await runDocument('README.md', db, README_DELIVERY, delivered);
    assert.equal(run.code, 0, explain(run));
    assert.match(run.output, /doc-test: done/);
    assert.deepEqual(run.wiped, [], 'lines the terminal erased before the reader saw them');
    assert.ok(run.blocksRun >= 3, `README blocks run: ${run.blocksRun}`);
    // The server of the first command, then the same terminal's restart for the target's CA.
    assert.equal(run.serverOutputs.length, 2);
    // The subscribe answer, on its own line.
    assert.match(
      run.output,
      /^\{"id":"[^"]+","event":"call\.completed","callback_url":"https:\/\/localhost:\d+\/hook","filters":\{\}\}$/m,
      explain(run),
    );
    assert.match(run.output, README_DELIVERY, explain(run));
    assert.ok(await delivered(), 'the database records the delivery as succeeded');
  });

  test('every answer curl prints ends its line', async () => {
    const found: string[] = [];
    for (const file of ['README.md', 'docs/guide.md', 'zapier/README.md']) {
      for (const block of shellBlocks(await readFile(path.join(ROOT, file), 'utf8'), file)) {
        for (const command of curlsWithoutNewline(block.code)) found.push(`${file}:${block.line}: ${command}`);
      }
    }
    assert.deepEqual(found, [], "add -w '\\n' (or a -w format ending in \\n) to each");
    assert.deepEqual(
      curlsWithoutNewline(
        [
          'curl -s $BASE/a -H "x: 1"; curl -s $BASE/b -w \'\\n\'',
          'X=$(curl -s $BASE/c | node -pe 1)',
          'curl -s $BASE/d | grep -o x && curl -s -o /dev/null $BASE/e',
          'curl -s $BASE/f \\',
          '  -d \'{"a":"b;c"}\'   # {"ok":true}',
        ].join('\n'),
      ),
      ['curl -s $BASE/a -H "x: 1"', `curl -s $BASE/f -d '{"a":"b;c"}'`],
    );
  });

  test("the terminal: npm's spinner erases the line it draws on", () => {
    const spinner = '\u2819\x1b[1G\x1b[0K\u2839\x1b[1G\x1b[0K';
    const screen = renderTerminal(`{"id":"1"}${spinner}(no organizations)\r\n${spinner}done\r\n\x1b[32mgreen\x1b[39m\r\n50%\r100%\n`);
    assert.equal(screen.text, '(no organizations)\ndone\ngreen\n100%');
    assert.deepEqual(screen.wiped, ['{"id":"1"}']);
  });

  test('the block reader: markers, languages and unclosed blocks', () => {
    const blocks = shellBlocks(
      [
        '```sh',
        'echo one',
        '```',
        '<!-- doc-test: server -->',
        '```sh',
        'npm start',
        '```',
        '<!-- doc-test: skip (needs a browser) -->',
        '```sh',
        'open x',
        '```',
        '<!-- doc-test: restart -->',
        '```sh',
        'PORT=3001 npm start',
        '```',
        '```text',
        'not a command',
        '```',
      ].join('\n'),
      'x.md',
    );
    assert.deepEqual(
      blocks.map((b) => [b.line, b.mode, b.code]),
      [
        [1, 'run', 'echo one'],
        [5, 'server', 'npm start'],
        [9, 'skip', 'open x'],
        [13, 'restart', 'PORT=3001 npm start'],
      ],
    );
    assert.throws(() => shellBlocks('```bash\nls\n```', 'x.md'), /x\.md:1: shell blocks are `sh`/);
    assert.throws(() => shellBlocks('<!-- doc-test: skip -->\n```sh\nls\n```', 'x.md'), /needs a reason/);
    assert.throws(() => shellBlocks('<!-- doc-test: later -->', 'x.md'), /unknown doc-test marker/);
    assert.throws(() => shellBlocks('```sh\nls\n', 'x.md'), /unclosed/);
  });
});
