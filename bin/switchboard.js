#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx, so the CLI is always the
// code in this checkout (no separate build step to forget).
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
const code = await main(process.argv.slice(2));
// serve and worker keep running until a signal; one-shot commands exit now.
if (code !== 0 || !['serve', 'worker'].includes(process.argv[2] ?? '')) process.exit(code);
