import { describe, expect, it } from 'vitest';
import { parseAuthorization } from './authorization-header.js';

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

describe('parseAuthorization', () => {
  it('reads Basic credentials, splitting at the first colon and keeping UTF-8', () => {
    expect(parseAuthorization(`Basic ${b64('jürgen:pa:ss wörd')}`)).toEqual({
      kind: 'basic',
      username: 'jürgen',
      password: 'pa:ss wörd',
    });
  });

  it('reads a Bearer token; scheme names are case-insensitive', () => {
    expect(parseAuthorization('bearer  abc.def-123 ')).toEqual({
      kind: 'bearer',
      token: 'abc.def-123',
    });
    expect(parseAuthorization(`BASIC ${b64('a:')}`)).toEqual({
      kind: 'basic',
      username: 'a',
      password: '',
    });
  });

  it('reports no credentials for a missing or blank header', () => {
    expect(parseAuthorization(undefined)).toEqual({ kind: 'none' });
    expect(parseAuthorization('  ')).toEqual({ kind: 'none' });
  });

  it.each([
    ['Basic', 'Basic credentials are not base64 of "user:password"'],
    ['Basic !!!', 'Basic credentials are not base64 of "user:password"'],
    [`Basic ${b64('no-colon')}`, 'Basic credentials have no ":" between user and password'],
    ['Bearer', 'the Bearer token is empty'],
    ['Digest username="a"', 'the Authorization scheme is neither Basic nor Bearer'],
  ])('calls %j malformed: %s', (header, reason) => {
    expect(parseAuthorization(header)).toEqual({ kind: 'malformed', reason });
  });

  it('never echoes a bare token sent without a scheme', () => {
    const parsed = parseAuthorization('s3cret-token-value');
    expect(parsed.kind).toBe('malformed');
    expect(JSON.stringify(parsed)).not.toContain('s3cret');
  });
});
