import { describe, expect, it } from 'vitest';
import { configErrorOf, useConfigHome } from '../../test/support/config-home.js';
import { sha256Hex } from './auth.schema.js';

/** The queues, basePath, auth and remoteNodes settings. */
const { writeConfig, load } = useConfigHome();

describe('loadConfig queues', () => {
  it('reads queues with maxConcurrency', async () => {
    await writeConfig(
      'queues:\n  - name: batch\n    maxConcurrency: 2\n  - name: etl\n    maxConcurrency: 1\n',
    );
    const { config, warnings } = load();
    expect(config.queues).toEqual([
      { name: 'batch', maxConcurrency: 2 },
      { name: 'etl', maxConcurrency: 1 },
    ]);
    expect(warnings).toEqual([]);
  });

  it('accepts the deprecated maxActiveRuns as maxConcurrency and returns a warning naming it', async () => {
    const file = await writeConfig('queues:\n  - name: batch\n    maxActiveRuns: 3\n');
    const { config, warnings } = load();
    expect(config.queues).toEqual([{ name: 'batch', maxConcurrency: 3 }]);
    expect(warnings).toEqual([
      `${file}: queues[0] ("batch") uses the deprecated key maxActiveRuns: rename it to maxConcurrency`,
    ]);
  });

  it('rejects a queue that sets both maxConcurrency and maxActiveRuns', async () => {
    await writeConfig('queues:\n  - name: batch\n    maxConcurrency: 2\n    maxActiveRuns: 3\n');
    expect(configErrorOf(() => load()).message).toContain(
      'queues[0].maxActiveRuns = 3 is invalid: remove maxActiveRuns',
    );
  });

  it('rejects a queue without a concurrency limit', async () => {
    await writeConfig('queues:\n  - name: batch\n');
    expect(configErrorOf(() => load()).message).toContain(
      'queues[0].maxConcurrency is missing: give the queue a maxConcurrency',
    );
  });

  it('rejects duplicate queue names, naming the name and its position', async () => {
    const file = await writeConfig(
      'queues:\n  - name: batch\n    maxConcurrency: 1\n  - name: batch\n    maxConcurrency: 2\n',
    );
    expect(configErrorOf(() => load()).message).toBe(
      `${file}: queues[1].name = "batch" is invalid: rename or remove this queue: ` +
        'the name "batch" is already used',
    );
  });
});

describe('loadConfig basePath', () => {
  it.each([
    ['/', ''],
    ['//', ''],
    ['ui', '/ui'],
    ['/ui/', '/ui'],
    ['//a//b/', '/a/b'],
    ['/trellis', '/trellis'],
  ])('normalises SVC_BASE_PATH=%j to %j', (input, expected) => {
    expect(load({ SVC_BASE_PATH: input }).config.server.basePath).toBe(expected);
  });

  it('normalises basePath from the file too', async () => {
    await writeConfig('server:\n  basePath: "proxy/"\n');
    expect(load().config.server.basePath).toBe('/proxy');
  });

  it('rejects a basePath with a query string', () => {
    expect(configErrorOf(() => load({}, { basePath: '/ui?x=1' })).message).toContain(
      '--base-path: server.basePath = "/ui?x=1" is invalid',
    );
  });
});

describe('loadConfig auth and remote nodes', () => {
  it('adds an admin user from SVC_AUTH_BASIC_USERNAME and SVC_AUTH_BASIC_PASSWORD', () => {
    const { config } = load({ SVC_AUTH_BASIC_USERNAME: 'root', SVC_AUTH_BASIC_PASSWORD: 'pw' });
    expect(config.auth).toEqual({
      mode: 'basic',
      users: [{ name: 'root', role: 'admin', passwordSha256: sha256Hex('pw') }],
      tokens: [],
    });
  });

  it('adds an admin token from SVC_AUTH_TOKEN next to the tokens of the file', async () => {
    await writeConfig(
      'auth:\n  tokens:\n    - name: ci\n      token: file-token\n      role: operator\n',
    );
    const { config } = load({ SVC_AUTH_TOKEN: 'env-token' });
    expect(config.auth.mode).toBe('bearer');
    expect(config.auth.tokens.map((t) => [t.name, t.role])).toEqual([
      ['auth.token', 'admin'],
      ['ci', 'operator'],
    ]);
  });

  it('lets SVC_AUTH_MODE pick the challenge when both kinds of credentials exist', async () => {
    await writeConfig(
      'auth:\n  users:\n    - name: a\n      password: p\n      role: viewer\n  token: t\n',
    );
    expect(load().config.auth.mode).toBe('basic');
    expect(load({ SVC_AUTH_MODE: 'bearer' }).config.auth.mode).toBe('bearer');
  });

  it('rejects SVC_AUTH_MODE=basic without users, naming the variable and the fix', () => {
    expect(configErrorOf(() => load({ SVC_AUTH_MODE: 'basic' })).message).toBe(
      'SVC_AUTH_MODE: auth.mode = "basic" is invalid: basic needs at least one user: add one ' +
        'under auth.users, or set SVC_AUTH_BASIC_USERNAME and SVC_AUTH_BASIC_PASSWORD',
    );
  });

  it('never shows a password or token in a config error', async () => {
    await writeConfig(
      'auth:\n  users:\n    - name: a\n      password: 12345678\n      role: viewer\n' +
        '  tokens:\n    - tok-in-a-list\n' +
        'remoteNodes:\n  - name: n\n    apiBaseURL: http://h/api/v2\n    auth:\n      token: 987654\n',
    );
    const error = configErrorOf(() => load());
    expect(error.problems).toHaveLength(3);
    expect(error.message).toContain('auth.users[0].password = (hidden) is invalid');
    expect(error.message).toContain('auth.tokens[0] = (hidden) is invalid');
    expect(error.message).toContain('remoteNodes[0].auth.token = (hidden) is invalid');
    for (const secret of ['12345678', 'tok-in-a-list', '987654'])
      expect(error.message).not.toContain(secret);
  });

  it('suggests the right key for a typo inside auth and remoteNodes', async () => {
    await writeConfig(
      'auth:\n  users:\n    - name: a\n      pasword: p\n      role: viewer\n' +
        'remoteNodes:\n  - name: n\n    apiBaseUrl: http://h/api/v2\n',
    );
    const message = configErrorOf(() => load()).message;
    expect(message).toContain('unknown key auth.users[0].pasword: did you mean "password"?');
    expect(message).toContain('unknown key remoteNodes[0].apiBaseUrl: did you mean "apiBaseURL"?');
  });

  it('reads remote nodes from the file', async () => {
    await writeConfig(
      'remoteNodes:\n  - name: prod\n    apiBaseURL: https://prod.example.com/api/v2\n' +
        '    auth:\n      basic:\n        username: u\n        password: p\n    skipTLSVerify: true\n',
    );
    expect(load().config.remoteNodes).toEqual([
      {
        name: 'prod',
        apiBaseURL: 'https://prod.example.com/api/v2',
        auth: { basic: { username: 'u', password: 'p' } },
        skipTLSVerify: true,
        timeoutSec: 30,
      },
    ]);
  });
});
