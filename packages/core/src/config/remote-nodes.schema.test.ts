import { describe, expect, it } from 'vitest';
import { ConfigSchema } from './config.schema.js';

const parseNodes = (remoteNodes: unknown) =>
  ConfigSchema.parse({ home: '/h', remoteNodes }).remoteNodes;

const problems = (remoteNodes: unknown): string[] => {
  const r = ConfigSchema.safeParse({ home: '/h', remoteNodes });
  return r.success ? [] : r.error.issues.map((i) => `${i.path.slice(1).join('.')}: ${i.message}`);
};

describe('remoteNodes config', () => {
  it('fills skipTLSVerify and timeoutSec and drops a trailing slash of apiBaseURL', () => {
    expect(parseNodes([{ name: 'prod', apiBaseURL: 'https://prod.example.com/api/v2/' }])).toEqual([
      {
        name: 'prod',
        apiBaseURL: 'https://prod.example.com/api/v2',
        skipTLSVerify: false,
        timeoutSec: 30,
      },
    ]);
  });

  it('keeps basic or token credentials in clear, to send them on', () => {
    const nodes = parseNodes([
      {
        name: 'a',
        apiBaseURL: 'http://a:8080/api/v2',
        auth: { basic: { username: 'u', password: 'p' } },
      },
      { name: 'b', apiBaseURL: 'http://b/x/api/v2', auth: { token: 't' }, timeoutSec: 5 },
    ]);
    expect(nodes[0]?.auth).toEqual({ basic: { username: 'u', password: 'p' } });
    expect(nodes[1]).toMatchObject({ auth: { token: 't' }, timeoutSec: 5 });
  });

  it.each([
    ['ftp://h/api/v2'],
    ['/api/v2'],
    ['http://h/api/v1'],
    ['http://h/api/v2?x=1'],
    ['not a url'],
  ])('rejects apiBaseURL %j, naming the expected form', (apiBaseURL) => {
    expect(problems([{ name: 'n', apiBaseURL }])).toEqual([
      expect.stringMatching(/^0\.apiBaseURL: use an absolute http\(s\) URL ending in \/api\/v2/),
    ]);
  });

  it('rejects credentials inside the URL, pointing to auth.basic', () => {
    expect(problems([{ name: 'n', apiBaseURL: 'http://u:p@h/api/v2' }])).toEqual([
      '0.apiBaseURL: remove the user name and password from the URL and put them under auth.basic',
    ]);
  });

  it('rejects the name "local" and duplicate names', () => {
    expect(problems([{ name: 'local', apiBaseURL: 'http://h/api/v2' }])).toEqual([
      '0.name: use another name: "local" means this server',
    ]);
    expect(
      problems([
        { name: 'n', apiBaseURL: 'http://h/api/v2' },
        { name: 'n', apiBaseURL: 'http://i/api/v2' },
      ]),
    ).toEqual(['1.name: rename or remove this remote node: the name "n" is already used']);
  });

  it('requires exactly one of basic and token under auth', () => {
    expect(problems([{ name: 'n', apiBaseURL: 'http://h/api/v2', auth: {} }])).toEqual([
      '0.auth: give basic (username, password) or token',
    ]);
    expect(
      problems([
        {
          name: 'n',
          apiBaseURL: 'http://h/api/v2',
          auth: { token: 't', basic: { username: 'u', password: 'p' } },
        },
      ]),
    ).toEqual(['0.auth: give either basic or token, not both']);
  });

  it('rejects a timeoutSec below 1', () => {
    expect(problems([{ name: 'n', apiBaseURL: 'http://h/api/v2', timeoutSec: 0 }])).toEqual([
      '0.timeoutSec: use an integer of at least 1, e.g. 30',
    ]);
  });
});
