import { describe, expect, it } from 'vitest';
import type { Param } from '../model/dag.js';
import { Ctx } from './context.js';
import {
  nameParams,
  paramsToStrings,
  readParams,
  toDefaultParamsString,
  tokenizeParams,
} from './params.js';

describe('tokenizeParams', () => {
  it('reads KEY=value, KEY="quoted value" and positional values in order', () => {
    expect(tokenizeParams('A=1 B="x y" positional "quoted positional"')).toEqual([
      { name: 'A', value: '1' },
      { name: 'B', value: 'x y' },
      { value: 'positional' },
      { value: 'quoted positional' },
    ]);
  });

  it('unescapes \\" and \\\\ inside quotes', () => {
    expect(tokenizeParams('C="say \\"hi\\"" D="back\\\\slash"')).toEqual([
      { name: 'C', value: 'say "hi"' },
      { name: 'D', value: 'back\\slash' },
    ]);
  });

  it('keeps a backtick command verbatim, spaces included', () => {
    expect(tokenizeParams('TODAY=`date +%F` `whoami`')).toEqual([
      { name: 'TODAY', value: '`date +%F`' },
      { value: '`whoami`' },
    ]);
  });

  it('reads KEY= and KEY="" as an empty value', () => {
    expect(tokenizeParams('A= B="" C=3')).toEqual([
      { name: 'A', value: '' },
      { name: 'B', value: '' },
      { name: 'C', value: '3' },
    ]);
  });

  it('keeps "=" inside a value and treats a word with a non-name prefix as positional', () => {
    expect(tokenizeParams('Q=a=b --flag=x')).toEqual([
      { name: 'Q', value: 'a=b' },
      { value: '--flag=x' },
    ]);
  });

  it('returns no tokens for blank text', () => {
    expect(tokenizeParams('  ')).toEqual([]);
  });
});

describe('nameParams', () => {
  it('numbers positional values 1, 2, ... and skips named ones in the count', () => {
    expect(nameParams([{ value: 'a' }, { name: 'X', value: 'x' }, { value: 'b' }])).toEqual([
      { name: '1', value: 'a', positional: true },
      { name: 'X', value: 'x', positional: false },
      { name: '2', value: 'b', positional: true },
    ]);
  });
});

describe('toDefaultParamsString', () => {
  it('quotes every value and writes positional ones without a name', () => {
    const params = nameParams([{ name: 'A', value: '1' }, { value: 'x y' }]);
    expect(toDefaultParamsString(params)).toBe('A="1" "x y"');
  });

  it('is the empty string when there are no params', () => {
    expect(toDefaultParamsString([])).toBe('');
  });

  it('round-trips through tokenizeParams and nameParams, whatever the values hold', () => {
    const params: Param[] = nameParams([
      { name: 'PLAIN', value: 'value' },
      { name: 'SPACES', value: 'a b  c' },
      { name: 'QUOTES', value: 'say "hi"' },
      { name: 'BACKSLASH', value: 'C:\\dir\\' },
      { name: 'EMPTY', value: '' },
      { name: 'EQUALS', value: 'k=v' },
      { name: 'NEWLINE', value: 'line 1\nline 2' },
      { value: 'positional one' },
      { value: 'B=looks named' },
      { value: '' },
      { name: 'BACKTICK', value: '`date`' },
    ]);
    const text = toDefaultParamsString(params);
    expect(nameParams(tokenizeParams(text))).toEqual(params);
  });
});

describe('paramsToStrings', () => {
  it('writes KEY=value, positional ones as 1=value', () => {
    expect(paramsToStrings(nameParams([{ name: 'A', value: 'x y' }, { value: 'p' }]))).toEqual([
      'A=x y',
      '1=p',
    ]);
  });
});

describe('readParams', () => {
  const read = (v: unknown): { params: Param[]; problems: string[] } => {
    const ctx = new Ctx();
    const params = readParams(ctx, v, ['params']);
    return { params, problems: ctx.problems.map((p) => `${p.path}: ${p.message}`) };
  };

  it('reads the list form: KEY: value, KEY=value strings, plain values and numbers', () => {
    expect(read([{ A: 1 }, 'B=x y', 'plain', 42]).params).toEqual([
      { name: 'A', value: '1', positional: false },
      { name: 'B', value: 'x y', positional: false },
      { name: '1', value: 'plain', positional: true },
      { name: '2', value: '42', positional: true },
    ]);
  });

  it('reads a mapping, with an empty value for a key without one', () => {
    expect(read({ A: 'x', EMPTY: null }).params).toEqual([
      { name: 'A', value: 'x', positional: false },
      { name: 'EMPTY', value: '', positional: false },
    ]);
  });

  it('reports names that cannot be variables, in every form, at their entry', () => {
    expect(read([{ 'my-param': 1 }, 'bad.name=2']).problems).toEqual([
      'params[0].my-param: invalid parameter name "my-param": use letters, digits and "_", not starting with a digit',
      'params[1]: invalid parameter name "bad.name": use letters, digits and "_", not starting with a digit',
    ]);
    expect(read('GOOD=1 other-bad=2').problems).toEqual([
      'params: invalid parameter name "other-bad": use letters, digits and "_", not starting with a digit',
    ]);
  });

  it('reports a name defined twice at its second entry', () => {
    expect(read([{ A: 1 }, { B: 2 }, 'A=3']).problems).toEqual([
      'params[2]: parameter "A" is defined twice',
    ]);
  });
});
