import { describe, expect, it } from 'vitest';
import { compilePattern } from './pattern.js';

describe('compilePattern', () => {
  it('compiles plain JavaScript patterns', () => {
    expect(compilePattern('^ok$').test('ok')).toBe(true);
  });

  it('turns a leading Go-style flag group into JavaScript flags', () => {
    const re = compilePattern('(?i)^warn');
    expect(re.flags).toBe('i');
    expect(re.test('WARNING: disk')).toBe(true);
    expect(compilePattern('(?is)a.b').flags).toBe('is');
  });

  it('keeps a flag group that is not leading as regular syntax, and throws for invalid ones', () => {
    expect(() => compilePattern('a(?i)b')).toThrow(SyntaxError);
    expect(() => compilePattern('(unclosed')).toThrow(SyntaxError);
  });
});
