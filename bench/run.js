// `pnpm bench`: runs every bench/*.bench.js in order and prints their figures. Benchmarks are
// measured here, never asserted in the test suite (README.md, section "Development").
import { readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const dir = dirname(fileURLToPath(import.meta.url));
const only = process.argv[2];
for (const f of readdirSync(dir)
  .filter((n) => n.endsWith('.bench.js'))
  .sort()) {
  if (only && !f.includes(only)) continue;
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  console.log(`\n## ${f} (machine load 1/5/15 min: ${load})`);
  const mod = await import(pathToFileURL(join(dir, f)).href);
  await mod.default();
}
