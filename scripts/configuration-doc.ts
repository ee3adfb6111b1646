// Writes docs/configuration.md from the registry of settings (src/config/settings/).
import { writeFile } from 'node:fs/promises';
import { configurationDoc } from '../src/config/configuration-doc.ts';

await writeFile(new URL('../docs/configuration.md', import.meta.url), configurationDoc());
process.stdout.write('docs/configuration.md written\n');
