import { describe, expect, it } from 'vitest';
import { expandVarsSync } from './expand.js';
import { childOutputJson, trimOutput } from './output.js';

describe('trimOutput', () => {
  it('trims surrounding whitespace and trailing newlines', () => {
    expect(trimOutput('  \n value \r\n\n')).toBe('value');
  });

  it('keeps inner whitespace and line breaks', () => {
    expect(trimOutput('a  b\n c\n')).toBe('a  b\n c');
  });

  it('gives an empty value for blank output', () => {
    expect(trimOutput(' \n\t')).toBe('');
  });
});

describe('childOutputJson', () => {
  it('writes {name, params, outputs} as pretty JSON', () => {
    expect(childOutputJson('child', '{"A":"1"}', { RESULT: 'ok', COUNT: '3' })).toBe(
      [
        '{',
        '  "name": "child",',
        '  "params": "{\\"A\\":\\"1\\"}",',
        '  "outputs": {',
        '    "RESULT": "ok",',
        '    "COUNT": "3"',
        '  }',
        '}',
      ].join('\n'),
    );
  });

  it('writes an empty outputs object for a child without output variables', () => {
    expect(JSON.parse(childOutputJson('c', '', {}))).toEqual({
      name: 'c',
      params: '',
      outputs: {},
    });
  });

  it('is readable as ${VAR.outputs.NAME}', () => {
    const out = childOutputJson('c', '', { RESULT: 'done', JSON: '{"k":1}' });
    expect(expandVarsSync('${OUT.outputs.RESULT} ${OUT.name}', [{ OUT: out }])).toBe('done c');
  });
});
