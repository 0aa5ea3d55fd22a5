import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@trellis/core';
import { parseDagFile } from '@trellis/spec';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const docs = [
  join(root, 'README.md'),
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(root, 'docs', f)),
];

interface Example {
  file: string;
  line: number;
  kind: 'dag' | 'config';
  text: string;
}

/**
 * Every ```yaml block of the README and docs/ is a DAG and must validate; a block fenced as
 * ```yaml config is a config.yaml and must load. Nothing else is fenced as yaml.
 */
const examples: Example[] = docs.flatMap((file) => {
  const out: Example[] = [];
  const lines = readFileSync(file, 'utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = /^```yaml(?:\s+(\w+))?\s*$/.exec(lines[i] ?? '');
    if (!m) continue;
    const start = i;
    const body: string[] = [];
    while (++i < lines.length && lines[i] !== '```') body.push(lines[i] ?? '');
    out.push({
      file: file.slice(root.length + 1),
      line: start + 1,
      kind: m[1] === 'config' ? 'config' : 'dag',
      text: body.join('\n'),
    });
  }
  return out;
});

const tmp = mkdtempSync(join(tmpdir(), 'trellis-docs-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('examples in the README and docs', () => {
  it('exist', () => {
    expect(examples.filter((e) => e.kind === 'dag').length).toBeGreaterThan(0);
  });

  it.each(examples.map((e) => [`${e.file}:${e.line}`, e] as const))('%s is valid', (_where, e) => {
    if (e.kind === 'dag') {
      const r = parseDagFile(e.text, { location: join(tmp, 'example.yaml') });
      expect(r.errors).toEqual([]);
    } else {
      const file = join(tmp, 'config.yaml');
      writeFileSync(file, e.text);
      expect(() => loadConfig({ env: { SVC_HOME: tmp }, argv: {}, file })).not.toThrow();
    }
  });
});

describe('docs/configuration.md', () => {
  it('documents every SVC_* variable the config loader reads', async () => {
    const { ENV_MAP } = await import('@trellis/core');
    const text = readFileSync(join(root, 'docs', 'configuration.md'), 'utf8');
    for (const e of ENV_MAP) expect(text, e.name).toContain(`\`${e.name}\``);
  });
});
