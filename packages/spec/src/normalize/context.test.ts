import { describe, expect, it } from 'vitest';
import {
  Ctx,
  MAX_HINT_CANDIDATES,
  boundedDistance,
  checkKeys,
  makeSuggester,
  readInt,
  readMap,
  readStringList,
  readStringMap,
  suggest,
} from './context.js';

const messages = (ctx: Ctx): string[] => ctx.problems.map((p) => `${p.path}: ${p.message}`);

describe('boundedDistance', () => {
  it('is the edit distance when that is within the bound', () => {
    expect(boundedDistance('kitten', 'sitting', 3)).toBe(3);
    expect(boundedDistance('same', 'same', 0)).toBe(0);
  });

  it('answers bound + 1 when the distance is larger, also for very different lengths', () => {
    expect(boundedDistance('kitten', 'sitting', 2)).toBe(3);
    expect(boundedDistance('a', 'a'.repeat(60_000), 5)).toBe(6);
  });
});

describe('suggest', () => {
  it('names the closest allowed key, or the only one the key is a prefix of', () => {
    expect(suggest('comand', ['command', 'script'])).toBe('command');
    expect(suggest('retry', ['retryPolicy', 'repeatPolicy'])).toBe('retryPolicy');
    expect(suggest('zzz', ['command', 'script'])).toBeUndefined();
  });

  it('gives no hint for a key longer than 64 characters', () => {
    const long = `${'a'.repeat(64)}b`;
    expect(suggest(long, [`${'a'.repeat(64)}c`])).toBeUndefined();
    expect(suggest(long.slice(1), [`${'a'.repeat(63)}c`])).toBe(`${'a'.repeat(63)}c`);
  });

  it('gives no hint among more than 500 candidates', () => {
    const many = Array.from({ length: MAX_HINT_CANDIDATES + 1 }, (_, i) => `step-${i}`);
    expect(suggest('step-1x', many)).toBeUndefined();
    expect(suggest('step-1x', many.slice(0, MAX_HINT_CANDIDATES))).toBe('step-1');
  });

  it('answers two 60,000-character names at once, without a hint', () => {
    const a = 'x'.repeat(60_000);
    expect(makeSuggester([`${a}1`])(`${a}2`)).toBeUndefined();
  });
});

describe('checkKeys', () => {
  it('quotes a long unknown key shortened, with no hint', () => {
    const ctx = new Ctx();
    const key = 'k'.repeat(100);
    checkKeys(ctx, { [key]: 1 }, [], ['name'], 'a DAG');
    expect(ctx.problems[0]?.message).toBe(
      `unknown field "${'k'.repeat(57)}..." in a DAG: allowed fields are name`,
    );
  });
});

describe('readInt', () => {
  it('refuses an integer beyond the safe range instead of rounding it', () => {
    const ctx = new Ctx();
    // What YAML makes of 99999999999999999999999.
    expect(readInt(ctx, 1e23, ['timeoutSec'], { min: 0 })).toBeUndefined();
    expect(readInt(ctx, '99999999999999999999999', ['delaySec'], { min: 0 })).toBeUndefined();
    expect(messages(ctx)).toEqual([
      'timeoutSec: must be an integer of at least 0, got 1e+23',
      'delaySec: must be an integer of at least 0, got "99999999999999999999999"',
    ]);
  });

  it('accepts the largest safe integer', () => {
    const ctx = new Ctx();
    expect(readInt(ctx, Number.MAX_SAFE_INTEGER, ['n'])).toBe(Number.MAX_SAFE_INTEGER);
    expect(ctx.problems).toEqual([]);
  });
});

describe('readStringList', () => {
  it('reports an empty item at its index instead of dropping it', () => {
    const ctx = new Ctx();
    expect(readStringList(ctx, ['echo', null, 'x'], ['command'])).toEqual(['echo', 'x']);
    expect(messages(ctx)).toEqual(['command[1]: must be text, got nothing']);
  });

  it('still treats an absent or null list as not written', () => {
    const ctx = new Ctx();
    expect(readStringList(ctx, null, ['tags'])).toBeUndefined();
    expect(readStringList(ctx, undefined, ['tags'])).toBeUndefined();
    expect(ctx.problems).toEqual([]);
  });
});

describe('readStringMap', () => {
  it('reports an empty value at its key instead of dropping it', () => {
    const ctx = new Ctx();
    expect(readStringMap(ctx, { a: 'x', b: null }, ['workerSelector'], 'workerSelector')).toEqual({
      a: 'x',
    });
    expect(messages(ctx)).toEqual(['workerSelector.b: must be text, got nothing']);
  });
});

describe('a __proto__ key', () => {
  // js-yaml keeps `__proto__` as an own property, as JSON.parse does.
  const withProto = (): Record<string, unknown> =>
    JSON.parse('{"__proto__": "x", "a": "y"}') as Record<string, unknown>;

  it('is reported by readMap and left out of the mapping it returns', () => {
    const ctx = new Ctx();
    const m = readMap(ctx, withProto(), ['registryAuths'], 'registryAuths');
    expect(m && Object.keys(m)).toEqual(['a']);
    expect(messages(ctx)).toEqual([
      'registryAuths.__proto__: "__proto__" cannot be used as a name here, because JavaScript objects reserve it: rename it',
    ]);
  });

  it('is reported by readStringMap, not silently dropped', () => {
    const ctx = new Ctx();
    expect(readStringMap(ctx, withProto(), ['workerSelector'], 'workerSelector')).toEqual({
      a: 'y',
    });
    expect(ctx.problems).toHaveLength(1);
    expect(ctx.problems[0]?.path).toBe('workerSelector.__proto__');
  });
});
