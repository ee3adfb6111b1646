// The running release's version, from package.json: `switchboard --version`,
// the OpenAPI document and the deliveries' User-Agent. A release is the git
// tag v<version> (CHANGELOG.md).
import { readFileSync } from 'node:fs';

export const VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string })
  .version;
