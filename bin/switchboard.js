#!/usr/bin/env node
// The switchboard executable. It runs the compiled JavaScript in dist/ (built
// by `npm run build`, which `npm ci` runs through `prepare` and `npm test`
// runs before the tests), with source maps so stack traces name the .ts
// lines. A checkout without dist/ (sources only) runs the TypeScript through
// tsx, a development dependency, instead.
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/cli/main.js', import.meta.url);
let main;
if (existsSync(compiled)) {
  process.setSourceMapsEnabled(true);
  ({ main } = await import(compiled.href));
} else {
  let register;
  try {
    ({ register } = await import('tsx/esm/api'));
  } catch {
    process.stderr.write('switchboard: dist/ is missing and tsx is not installed: run `npm run build` (with development dependencies)\n');
    process.exit(1);
  }
  register();
  ({ main } = await import('../src/cli/main.ts'));
}
const code = await main(process.argv.slice(2));
// serve and worker keep running until a signal; one-shot commands exit now.
if (code !== 0 || !['serve', 'worker'].includes(process.argv[2] ?? '')) process.exit(code);
