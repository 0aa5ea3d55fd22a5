// Writes docs/openapi.json from the API's route schemas: `pnpm gen:openapi`.
import { readFileSync, writeFileSync } from 'node:fs';
import { renderApiDocument } from '@trellis/api';

const version = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;
writeFileSync(new URL('../docs/openapi.json', import.meta.url), renderApiDocument(version));
console.log('docs/openapi.json written');
