import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseDagFile, type Dag } from '@trellis/spec';

const here = dirname(fileURLToPath(import.meta.url));
const validDir = join(here, 'fixtures', 'valid');
const invalidDir = join(here, 'fixtures', 'invalid');
const yamlIn = (dir: string): string[] =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort();

/** A `run:` target exists when a file of that name is in the same fixture folder. */
const dagExistsIn =
  (dir: string) =>
  (name: string): boolean =>
    existsSync(resolve(dir, name)) ||
    existsSync(join(dir, `${name}.yaml`)) ||
    existsSync(join(dir, `${name}.yml`));

const parseFixture = (dir: string, file: string) =>
  parseDagFile(readFileSync(join(dir, file), 'utf8'), {
    location: join(dir, file),
    dagExists: dagExistsIn(dir),
  });

describe('valid DAG fixtures', () => {
  it('has at least 60 of them', () => {
    expect(yamlIn(validDir).length).toBeGreaterThanOrEqual(60);
  });

  it.each(yamlIn(validDir))('%s parses with no problems', (file) => {
    const r = parseFixture(validDir, file);
    expect(r.errors).toEqual([]);
    expect(r.valid).toBe(true);
    // `no-steps-*` files are DAGs with no steps (docs/decisions.md, "A DAG with no steps").
    if (file.startsWith('no-steps-')) expect(r.main.dag.steps).toEqual([]);
    else expect(r.main.dag.steps.length).toBeGreaterThan(0);
  });
});

describe('invalid DAG fixtures', () => {
  it('has at least 40 of them, each with its expected problems', () => {
    const files = yamlIn(invalidDir);
    expect(files.length).toBeGreaterThanOrEqual(40);
    for (const f of files)
      expect(existsSync(join(invalidDir, f.replace(/\.yaml$/, '.problems.txt')))).toBe(true);
  });

  it.each(yamlIn(invalidDir))('%s reports exactly its expected problems', (file) => {
    const expected = readFileSync(
      join(invalidDir, file.replace(/\.yaml$/, '.problems.txt')),
      'utf8',
    )
      .split('\n')
      .filter((l) => l.trim() !== '');
    const r = parseFixture(invalidDir, file);
    expect(r.valid).toBe(false);
    expect(r.errors).toEqual(expected);
  });
});

/** Absolute paths made stable for snapshots. */
const portable = (dag: Dag): unknown =>
  JSON.parse(JSON.stringify(dag).replaceAll(validDir, '<fixtures>'));

describe('normalised form', () => {
  const snapshotted = [
    'chain-basic.yaml',
    'parallel-group.yaml',
    'policies-all.yaml',
    'multi-dag.yaml',
    'params-all-forms.yaml',
    'handlers.yaml',
  ];
  it.each(snapshotted)('%s normalises to its snapshot', (file) => {
    const r = parseFixture(validDir, file);
    expect({
      main: portable(r.main.dag),
      local: r.localDags.map((d) => portable(d.dag)),
    }).toMatchSnapshot();
  });
});
