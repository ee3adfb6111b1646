// One of the test processes that share the parallel phase's files (scripts/test.ts).
//
// Starting a test process costs more CPU than most test files use: Node.js,
// then the sources and their dependencies loaded (about 3 s through tsx on
// Node 20, 1.5 s on Node 24). So the parallel phase runs as many of these
// processes as files may run at once, and each takes the next file nobody
// has taken from one list until the list is done, loading what the previous
// files loaded only once. A file runs inside a suite named for it, so its
// top-level hooks stay its own and the report still says which file a test
// is in; the files of one process run one after another.
//
// The list is SB_TEST_QUEUE/files.json, in the order files should start
// (longest first). A file is taken by creating SB_TEST_QUEUE/taken/<index>
// with O_EXCL: whichever process creates it runs the file. How long each took
// is appended to SB_TEST_QUEUE/durations-<pid>.jsonl, for the next run's order.
import { appendFileSync, openSync, closeSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe } from 'node:test';
import { pathToFileURL } from 'node:url';

const queue = process.env.SB_TEST_QUEUE;
if (!queue) throw new Error('SB_TEST_QUEUE is not set: scripts/test.ts starts this process');
const files = JSON.parse(readFileSync(path.join(queue, 'files.json'), 'utf8')) as string[];
const durations = path.join(queue, `durations-${process.pid}.jsonl`);

function take(index: number): boolean {
  try {
    closeSync(openSync(path.join(queue!, 'taken', String(index)), 'wx'));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

// A file that hangs fails here, and the other files go on. Node 20 applies --test-timeout to a test process as a
// whole (later versions to each of its tests), so this is the one limit a file has there.
const FILE_TIMEOUT_MS = 600_000;

for (const [index, file] of files.entries()) {
  if (!take(index)) continue;
  const started = performance.now();
  await describe(path.relative(process.cwd(), file), { timeout: FILE_TIMEOUT_MS }, async () => {
    await import(pathToFileURL(file).href);
  });
  appendFileSync(durations, `${JSON.stringify({ file, ms: Math.round(performance.now() - started) })}\n`);
}
