import type { Param } from '@trellis/spec';
import { describe, expect, it } from 'vitest';
import { applyParamOverrides, paramsToJsonText, parseParamsInput } from './params.js';

const named = (name: string, value: string): Param => ({ name, value, positional: false });
const pos = (name: string, value: string): Param => ({ name, value, positional: true });

describe('parseParamsInput', () => {
  it('reads a JSON object as named params, stringifying scalar values', () => {
    expect(parseParamsInput('{"A":"1","B":2,"C":true,"D":null}')).toEqual([
      { name: 'A', value: '1' },
      { name: 'B', value: '2' },
      { name: 'C', value: 'true' },
      { name: 'D', value: 'null' },
    ]);
  });

  it('JSON-encodes array and object values', () => {
    expect(parseParamsInput('{"L":[1,"a"],"M":{"k":"v"}}')).toEqual([
      { name: 'L', value: '[1,"a"]' },
      { name: 'M', value: '{"k":"v"}' },
    ]);
  });

  it('keeps a position key such as "1" as a token named by its position', () => {
    expect(parseParamsInput(' {"X":"x","1":"first"} ')).toEqual([
      { name: '1', value: 'first' },
      { name: 'X', value: 'x' },
    ]);
  });

  it('reads a JSON array as positional params', () => {
    expect(parseParamsInput('["a b", "c", 3]')).toEqual([
      { value: 'a b' },
      { value: 'c' },
      { value: '3' },
    ]);
  });

  it('reads the string form with named, quoted and positional values', () => {
    expect(parseParamsInput('A=1 B="x y" positional')).toEqual([
      { name: 'A', value: '1' },
      { name: 'B', value: 'x y' },
      { value: 'positional' },
    ]);
  });

  it('reads text starting with [ that is not JSON in the string form', () => {
    expect(parseParamsInput('[a b]')).toEqual([{ value: '[a' }, { value: 'b]' }]);
  });

  it('reads empty text as no params', () => {
    expect(parseParamsInput('')).toEqual([]);
    expect(parseParamsInput('   ')).toEqual([]);
    expect(parseParamsInput('{}')).toEqual([]);
  });

  it('returns a problem for bad JSON that starts with {', () => {
    const out = parseParamsInput('{"A":1,}');
    expect(typeof out).toBe('string');
    expect(out).toMatch(/^params start with "\{" but are not valid JSON .*give a JSON object/);
  });

  it('returns a problem for a JSON key that is not a parameter name', () => {
    expect(parseParamsInput('{"my-param":"x"}')).toBe(
      'invalid parameter name "my-param": use letters, digits and "_", not starting with a digit, or a position such as "1"',
    );
    expect(typeof parseParamsInput('{"0":"x"}')).toBe('string');
  });
});

describe('applyParamOverrides', () => {
  const defaults = [named('A', 'a'), pos('1', 'p1'), named('B', 'b'), pos('2', 'p2')];

  it('replaces a named param by name, keeping its place', () => {
    expect(applyParamOverrides(defaults, [{ name: 'B', value: 'B!' }])).toEqual([
      named('A', 'a'),
      pos('1', 'p1'),
      named('B', 'B!'),
      pos('2', 'p2'),
    ]);
  });

  it('appends a named param that has no default', () => {
    expect(applyParamOverrides([named('A', 'a')], [{ name: 'C', value: 'c' }])).toEqual([
      named('A', 'a'),
      named('C', 'c'),
    ]);
  });

  it('replaces positional params by position', () => {
    expect(applyParamOverrides(defaults, [{ value: 'P1' }, { value: 'P2' }])).toEqual([
      named('A', 'a'),
      pos('1', 'P1'),
      named('B', 'b'),
      pos('2', 'P2'),
    ]);
  });

  it('appends positional params beyond the defaults, numbered after them', () => {
    expect(applyParamOverrides([pos('1', 'p1')], [{ value: 'x' }, { value: 'y' }])).toEqual([
      pos('1', 'x'),
      pos('2', 'y'),
    ]);
  });

  it('replaces the Nth positional param for an override named "N"', () => {
    expect(applyParamOverrides(defaults, [{ name: '2', value: 'second' }])).toEqual([
      named('A', 'a'),
      pos('1', 'p1'),
      named('B', 'b'),
      pos('2', 'second'),
    ]);
  });

  it('appends an override named beyond the last position as the next positional param', () => {
    expect(applyParamOverrides([pos('1', 'p1')], [{ name: '5', value: 'v' }])).toEqual([
      pos('1', 'p1'),
      pos('2', 'v'),
    ]);
  });

  it('does not let a named override replace a positional param of the same name', () => {
    const out = applyParamOverrides([pos('1', 'p1')], [{ value: 'x' }, { name: 'A', value: 'a' }]);
    expect(out).toEqual([pos('1', 'x'), named('A', 'a')]);
  });

  it('lets the later of two overrides of one name win', () => {
    expect(
      applyParamOverrides(
        [],
        [
          { name: 'A', value: '1' },
          { name: 'A', value: '2' },
        ],
      ),
    ).toEqual([named('A', '2')]);
  });

  it('leaves the defaults untouched', () => {
    const copy = structuredClone(defaults);
    applyParamOverrides(defaults, [{ name: 'A', value: 'z' }, { value: 'z' }]);
    expect(defaults).toEqual(copy);
  });

  it('combines with parseParamsInput for JSON and for the string form alike', () => {
    const base = [named('FOO', 'bar'), pos('1', 'one')];
    const fromJson = parseParamsInput('{"FOO":"json","1":"uno"}');
    const fromText = parseParamsInput('FOO=json uno');
    if (typeof fromJson === 'string' || typeof fromText === 'string') throw new Error('problem');
    expect(applyParamOverrides(base, fromJson)).toEqual([named('FOO', 'json'), pos('1', 'uno')]);
    expect(applyParamOverrides(base, fromText)).toEqual([named('FOO', 'json'), pos('1', 'uno')]);
  });
});

describe('paramsToJsonText', () => {
  it('writes a JSON object in the params order, positional ones by number', () => {
    expect(paramsToJsonText([named('NAME', 'x'), pos('1', 'positional')])).toBe(
      '{"NAME":"x","1":"positional"}',
    );
  });

  it('escapes quotes, backslashes and line breaks', () => {
    const text = paramsToJsonText([named('A', 'say "hi"\\\n')]);
    expect(JSON.parse(text)).toEqual({ A: 'say "hi"\\\n' });
  });

  it('writes {} for no params', () => {
    expect(paramsToJsonText([])).toBe('{}');
  });

  it('writes a repeated name once, in its first place with its last value', () => {
    expect(paramsToJsonText([named('A', '1'), named('B', 'b'), named('A', '2')])).toBe(
      '{"A":"2","B":"b"}',
    );
  });

  it('is read back by parseParamsInput', () => {
    const params = [named('A', 'x y'), pos('1', 'p'), named('B', '{"j":1}')];
    const tokens = parseParamsInput(paramsToJsonText(params));
    if (typeof tokens === 'string') throw new Error(tokens);
    expect(applyParamOverrides([], tokens)).toEqual([
      pos('1', 'p'),
      named('A', 'x y'),
      named('B', '{"j":1}'),
    ]);
  });
});
