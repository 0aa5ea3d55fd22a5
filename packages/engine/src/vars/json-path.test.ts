import { describe, expect, it } from 'vitest';
import { jsonValueText, parseJsonPath, readJsonPath } from './json-path.js';

describe('parseJsonPath', () => {
  it('reads keys, indexes and quoted keys', () => {
    expect(parseJsonPath('.a.b[0][-1]["x.y"].c')).toEqual(['a', 'b', 0, -1, 'x.y', 'c']);
  });

  it('refuses a malformed path', () => {
    for (const bad of ['', 'a', '..a', '.a.', '[x]', '[1', '.a]'])
      expect(parseJsonPath(bad)).toBeUndefined();
  });
});

describe('readJsonPath', () => {
  const doc: unknown = { a: [{ b: 1 }, { b: null }], s: 'str' };

  it('follows keys and indexes', () => {
    expect(readJsonPath(doc, ['a', 1, 'b'])).toBeNull();
    expect(readJsonPath(doc, ['a', '0', 'b'])).toBe(1);
  });

  it('gives undefined for a missing step or a step into a scalar', () => {
    expect(readJsonPath(doc, ['z'])).toBeUndefined();
    expect(readJsonPath(doc, ['a', 2])).toBeUndefined();
    expect(readJsonPath(doc, ['s', 'length'])).toBeUndefined();
    expect(readJsonPath(doc, ['a', 'length'])).toBeUndefined();
  });
});

describe('jsonValueText', () => {
  it('prints strings plainly and everything else as JSON', () => {
    expect([
      jsonValueText('x'),
      jsonValueText(1.5),
      jsonValueText(false),
      jsonValueText(null),
    ]).toEqual(['x', '1.5', 'false', 'null']);
    expect(jsonValueText({ a: [1, 2] })).toBe('{"a":[1,2]}');
  });
});
