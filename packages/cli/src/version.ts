import { readFileSync } from 'node:fs';

/** The version in this package's package.json (the product version). */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;
