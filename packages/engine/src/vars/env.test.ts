import { describe, expect, it } from 'vitest';
import { filterSystemEnv, isPassedSystemEnvName, parseDotenv } from './env.js';

describe('filterSystemEnv', () => {
  it('keeps PATH, HOME, LANG, TZ, SHELL and the SVC_, LC_, DAG_ prefixes', () => {
    const env = {
      PATH: '/bin',
      HOME: '/root',
      LANG: 'C.UTF-8',
      TZ: 'UTC',
      SHELL: '/bin/sh',
      SVC_HOME: '/svc',
      LC_ALL: 'C',
      DAG_FLAG: '1',
    };
    expect(filterSystemEnv(env)).toEqual(env);
  });

  it('drops secrets and everything else not listed', () => {
    const out = filterSystemEnv({
      PATH: '/bin',
      LC_ALL: 'C',
      AWS_SECRET: 'x',
      AWS_SECRET_ACCESS_KEY: 'y',
      USER: 'me',
      LD_LIBRARY_PATH: '/lib',
      DAGU_HOME: '/d',
    });
    expect(out).toEqual({ PATH: '/bin', LC_ALL: 'C' });
  });

  it('matches names and prefixes case-sensitively', () => {
    expect(filterSystemEnv({ path: '/bin', lc_all: 'C', Svc_X: '1', SVC_: '' })).toEqual({
      SVC_: '',
    });
  });

  it('drops entries whose value is undefined, as process.env-shaped records may have', () => {
    expect(filterSystemEnv({ PATH: undefined, HOME: '/h' })).toEqual({ HOME: '/h' });
  });

  it('answers the same question one name at a time', () => {
    expect(isPassedSystemEnvName('LC_CTYPE')).toBe(true);
    expect(isPassedSystemEnvName('PATHX')).toBe(false);
  });
});

describe('parseDotenv', () => {
  it('reads KEY=VALUE lines in order, skipping comments and blank lines', () => {
    const text = '# settings\n\nA=1\n  # indented comment\nB=two words\n\n';
    expect(parseDotenv(text)).toEqual({
      entries: [
        { name: 'A', value: '1' },
        { name: 'B', value: 'two words' },
      ],
      problems: [],
    });
  });

  it('accepts an export prefix and blanks around =', () => {
    expect(parseDotenv('export A=1\nexport  B = 2 \n').entries).toEqual([
      { name: 'A', value: '1' },
      { name: 'B', value: '2' },
    ]);
  });

  it('keeps a repeated name twice, so the later one can win', () => {
    expect(parseDotenv('A=1\nA=2').entries).toEqual([
      { name: 'A', value: '1' },
      { name: 'A', value: '2' },
    ]);
  });

  it('reads an empty value', () => {
    expect(parseDotenv('A=\nB=""\nC=\'\'').entries).toEqual([
      { name: 'A', value: '' },
      { name: 'B', value: '' },
      { name: 'C', value: '' },
    ]);
  });

  it('strips an inline comment from an unquoted value, but not a # inside a word', () => {
    expect(parseDotenv('A=1 # one\nB=a#b').entries).toEqual([
      { name: 'A', value: '1' },
      { name: 'B', value: 'a#b' },
    ]);
  });

  it('keeps single-quoted text literally', () => {
    expect(parseDotenv("A='x \\n $Y # z'  # comment").entries).toEqual([
      { name: 'A', value: 'x \\n $Y # z' },
    ]);
  });

  it('processes \\n, \\" and \\\\ inside double quotes', () => {
    expect(parseDotenv('A="line1\\nline2 \\"q\\" back\\\\slash # kept"').entries).toEqual([
      { name: 'A', value: 'line1\nline2 "q" back\\slash # kept' },
    ]);
  });

  it('keeps an unknown escape in double quotes as written', () => {
    expect(parseDotenv('A="a\\qb"').entries).toEqual([{ name: 'A', value: 'a\\qb' }]);
  });

  it('reads a quoted value that spans lines', () => {
    expect(parseDotenv('A="first\nsecond"\nB=3').entries).toEqual([
      { name: 'A', value: 'first\nsecond' },
      { name: 'B', value: '3' },
    ]);
  });

  it('reads CRLF line endings and a byte order mark', () => {
    expect(parseDotenv('\uFEFFA=1\r\nB="2"\r\n').entries).toEqual([
      { name: 'A', value: '1' },
      { name: 'B', value: '2' },
    ]);
  });

  it('reports a line without = and keeps reading', () => {
    expect(parseDotenv('A=1\nnot an assignment\nB=2')).toEqual({
      entries: [
        { name: 'A', value: '1' },
        { name: 'B', value: '2' },
      ],
      problems: ['line 2: expected KEY=value, got "not an assignment"'],
    });
  });

  it('reports an invalid name', () => {
    expect(parseDotenv('1A=x\nMY-VAR=y').problems).toEqual([
      'line 1: expected KEY=value, got "1A=x"',
      'line 2: expected KEY=value, got "MY-VAR=y"',
    ]);
  });

  it('reports a quote that never closes', () => {
    const parsed = parseDotenv('A=1\nB="open\nC=3');
    expect(parsed.entries).toEqual([{ name: 'A', value: '1' }]);
    expect(parsed.problems).toEqual([
      'line 2: the value of B opens a " quote that is never closed',
    ]);
  });

  it('reports text after a closing quote', () => {
    expect(parseDotenv('A="x" y\nB=1')).toEqual({
      entries: [{ name: 'B', value: '1' }],
      problems: ['line 1: unexpected text "y" after the quoted value of A'],
    });
  });

  it('never throws, whatever the text', () => {
    for (const text of ['=', '"', "A='", 'export', '\\', '\u0000=\u0000', 'A="\\'])
      expect(() => parseDotenv(text)).not.toThrow();
  });
});
