import { describe, expect, it } from 'vitest';
import { parseYaml } from './parse-yaml.js';
import { LineIndex } from './source-map.js';

describe('LineIndex', () => {
  const text = 'a\nbc\n\nd';

  it('maps offsets to 1-based lines and columns', () => {
    const lines = new LineIndex(text);
    expect(lines.position(0)).toEqual({ line: 1, column: 1 });
    expect(lines.position(2)).toEqual({ line: 2, column: 1 });
    expect(lines.position(3)).toEqual({ line: 2, column: 2 });
    expect(lines.position(5)).toEqual({ line: 3, column: 1 });
    expect(lines.position(6)).toEqual({ line: 4, column: 1 });
  });

  it('counts a newline character as the end of its own line', () => {
    expect(new LineIndex(text).position(1)).toEqual({ line: 1, column: 2 });
  });

  it('places offsets of a text without newlines on line 1', () => {
    expect(new LineIndex('abc').position(2)).toEqual({ line: 1, column: 3 });
  });

  it('counts a bare carriage return as a line break, and CRLF as one break', () => {
    const lines = new LineIndex('a\rb\r\nc\nd');
    expect(lines.position(2)).toEqual({ line: 2, column: 1 });
    expect(lines.position(5)).toEqual({ line: 3, column: 1 });
    expect(lines.position(7)).toEqual({ line: 4, column: 1 });
  });
});

describe('SourceMap positions from parseYaml', () => {
  const text = [
    '# comment', //                1
    'name: demo', //               2
    'steps:', //                   3
    '  - name: a', //              4
    '    command: echo a', //      5
    '    retryPolicy:', //         6
    '      limit: 3', //           7
    '  - echo b', //               8
    '  - - echo c1', //            9
    '    - name: c2', //          10
    '      depends: [a, "step 2"]', // 11
    'env: {A: 1, B: 2}', //       12
  ].join('\n');
  const doc = parseYaml(text).documents[0];
  const at = (...path: (string | number)[]) => doc?.sourceMap.positionOf(path);

  it('places a mapping entry at its key', () => {
    expect(at('name')).toEqual({ line: 2, column: 1 });
    expect(at('steps', 0, 'retryPolicy', 'limit')).toEqual({ line: 7, column: 7 });
  });

  it('places a list item at its first character', () => {
    expect(at('steps', 0)).toEqual({ line: 4, column: 5 });
    expect(at('steps', 1)).toEqual({ line: 8, column: 5 });
  });

  it('follows nested lists and flow collections', () => {
    expect(at('steps', 2, 0)).toEqual({ line: 9, column: 7 });
    expect(at('steps', 2, 1, 'depends', 1)).toEqual({ line: 11, column: 21 });
    expect(at('env', 'B')).toEqual({ line: 12, column: 13 });
  });

  it('falls back to the nearest ancestor for a path that is not written', () => {
    expect(at('steps', 0, 'retryPolicy', 'backoff')).toEqual({ line: 6, column: 5 });
    expect(at('steps', 7)).toEqual({ line: 3, column: 1 });
  });

  it('names the right line in a file whose lines end in bare carriage returns', () => {
    const cr = parseYaml('# old Mac file\rname: demo\rsteps:\r  - echo a\r  - echo b\r');
    expect(cr.documents[0]?.sourceMap.positionOf(['steps', 1])).toEqual({ line: 5, column: 5 });
  });

  it('counts lines from the start of the file in later documents', () => {
    const docs = parseYaml('name: one\nsteps: [a]\n---\nname: two\nsteps:\n  - b\n').documents;
    expect(docs).toHaveLength(2);
    expect(docs[1]?.sourceMap.positionOf(['name'])).toEqual({ line: 4, column: 1 });
    expect(docs[1]?.sourceMap.positionOf(['steps', 0])).toEqual({ line: 6, column: 5 });
  });

  it('places keys brought in by a merge key at the merge key', () => {
    const merged = parseYaml('a: &x\n  k: 1\nb:\n  <<: *x\n  j: 2\n').documents[0];
    expect(merged?.value).toEqual({ a: { k: 1 }, b: { k: 1, j: 2 } });
    expect(merged?.sourceMap.positionOf(['b', 'j'])).toEqual({ line: 5, column: 3 });
    expect(merged?.sourceMap.positionOf(['b', 'k'])).toEqual({ line: 3, column: 1 });
  });
});

describe('parseYaml problems', () => {
  it('reports a syntax error with its line and column and returns no documents', () => {
    const r = parseYaml('steps:\n  - a\n - b\n');
    expect(r.documents).toEqual([]);
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]).toMatchObject({ line: 3, column: 2 });
  });

  it('names the key of a duplicated mapping key', () => {
    expect(parseYaml('name: a\nname: b\n').problems[0]?.message).toBe(
      'YAML syntax error: duplicated mapping key "name": each key may appear once per mapping',
    );
  });

  it('refuses an alias used inside the node it refers to', () => {
    const r = parseYaml('steps: &s\n  - *s\n');
    expect(r.documents).toEqual([]);
    expect(r.problems[0]).toMatchObject({ line: 2, column: 5 });
    expect(r.problems[0]?.message).toMatch(/alias \*s is used inside the node it refers to/);
  });

  it('accepts an alias to a finished sibling node', () => {
    const r = parseYaml('a: &x [1]\nb: *x\n');
    expect(r.problems).toEqual([]);
    expect(r.documents[0]?.value).toEqual({ a: [1], b: [1] });
  });
});
