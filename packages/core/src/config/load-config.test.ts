import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.js';
import type { ConfigFlags } from './config-flags.js';
import { sha256Hex } from './auth.schema.js';
import { loadConfig, type LoadConfigOptions } from './load-config.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'trellis-config-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The fake user's home (`~`) and the SVC_HOME most tests use. */
const userHome = (): string => path.join(dir, 'user');
const svcHome = (): string => path.join(dir, 'svc');

const writeConfig = async (yaml: string, file = path.join(svcHome(), 'config.yaml')) => {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, yaml);
  return file;
};

/** loadConfig with a hermetic HOME and SVC_HOME under the temp dir, and cwd = the temp dir. */
const load = (
  env: Record<string, string> = {},
  argv: ConfigFlags = {},
  extra: Partial<LoadConfigOptions> = {},
) =>
  loadConfig({ env: { HOME: userHome(), SVC_HOME: svcHome(), ...env }, argv, cwd: dir, ...extra });

/** The ConfigError `fn` throws (fails the test when it throws anything else or nothing). */
const configErrorOf = (fn: () => unknown): ConfigError => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError, but nothing was thrown');
};

describe('loadConfig defaults', () => {
  it('returns every documented default when there is no config file', () => {
    const { config, warnings, configFile } = load();
    expect(config).toEqual({
      home: svcHome(),
      paths: {
        dagsDir: path.join(svcHome(), 'dags'),
        dataDir: path.join(svcHome(), 'data'),
        logDir: path.join(svcHome(), 'logs'),
      },
      server: {
        host: 'localhost',
        port: 8080,
        basePath: '',
        headless: false,
        tz: '',
        metricsPublic: true,
      },
      defaultShell: '',
      coordinator: {
        host: '127.0.0.1',
        port: 50055,
        advertise: '',
        tlsCertFile: '',
        tlsKeyFile: '',
        tlsCaFile: '',
      },
      worker: { id: '', labels: {}, concurrency: 4 },
      queues: [],
      histRetentionDays: 30,
      scheduler: { zombieDetectionIntervalSec: 45 },
      auth: { mode: 'none', users: [], tokens: [] },
      remoteNodes: [],
    });
    expect(config.redis).toBeUndefined();
    expect(warnings).toEqual([]);
    expect(configFile).toBeUndefined();
  });

  it('defaults SVC_HOME to ~/.trellis in the HOME directory', () => {
    const { config } = loadConfig({ env: { HOME: userHome() }, argv: {}, cwd: dir });
    expect(config.home).toBe(path.join(userHome(), '.trellis'));
  });

  it('defaults SVC_DAGS_DIR, SVC_DATA_DIR and SVC_LOG_DIR to folders under SVC_HOME', () => {
    const { config } = loadConfig({ env: { HOME: userHome() }, argv: {}, cwd: dir });
    const home = path.join(userHome(), '.trellis');
    expect(config.paths).toEqual({
      dagsDir: path.join(home, 'dags'),
      dataDir: path.join(home, 'data'),
      logDir: path.join(home, 'logs'),
    });
  });

  it('uses the OS user home for ~ when env has no HOME', async () => {
    const file = await writeConfig('', path.join(dir, 'empty.yaml'));
    const { config } = loadConfig({ env: {}, argv: {}, file });
    expect(config.home).toBe(path.join(os.homedir(), '.trellis'));
  });

  it('reads an empty or comment-only config file as all defaults', async () => {
    await writeConfig('# nothing set yet\n');
    const { config, configFile } = load();
    expect(config.server.port).toBe(8080);
    expect(configFile).toBe(path.join(svcHome(), 'config.yaml'));
  });

  it('treats a key with no value in the file as unset', async () => {
    await writeConfig('server:\n  # port: 9000\nqueues:\n');
    const { config } = load();
    expect(config.server.port).toBe(8080);
    expect(config.queues).toEqual([]);
  });

  it('returns a deeply frozen config', async () => {
    await writeConfig('queues:\n  - name: batch\n    maxConcurrency: 2\n');
    const { config } = load({ SVC_WORKER_LABELS: 'gpu=true' });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.server)).toBe(true);
    expect(Object.isFrozen(config.worker.labels)).toBe(true);
    expect(Object.isFrozen(config.queues)).toBe(true);
    expect(Object.isFrozen(config.queues[0])).toBe(true);
  });
});

describe('loadConfig precedence: defaults < file < env < flags', () => {
  const FILE = 'server:\n  host: file-host\n  port: 8001\npaths:\n  dagsDir: /from/file\n';

  it('lets the config file beat the defaults for host, port and dagsDir', async () => {
    await writeConfig(FILE);
    const { config } = load();
    expect([config.server.host, config.server.port, config.paths.dagsDir]).toEqual([
      'file-host',
      8001,
      '/from/file',
    ]);
  });

  it('lets SVC_* variables beat the config file for host, port and dagsDir', async () => {
    await writeConfig(FILE);
    const { config } = load({ SVC_HOST: 'env-host', SVC_PORT: '8002', SVC_DAGS_DIR: '/from/env' });
    expect([config.server.host, config.server.port, config.paths.dagsDir]).toEqual([
      'env-host',
      8002,
      '/from/env',
    ]);
  });

  it('lets CLI flags beat SVC_* variables for host, port and dagsDir', async () => {
    await writeConfig(FILE);
    const { config } = load(
      { SVC_HOST: 'env-host', SVC_PORT: '8002', SVC_DAGS_DIR: '/from/env' },
      { host: 'flag-host', port: 8003, dags: '/from/flag' },
    );
    expect([config.server.host, config.server.port, config.paths.dagsDir]).toEqual([
      'flag-host',
      8003,
      '/from/flag',
    ]);
  });

  it('keeps file values that env and flags do not override', async () => {
    await writeConfig(FILE);
    const { config } = load({ SVC_PORT: '8002' });
    expect(config.server.host).toBe('file-host');
  });

  it('lets --home beat SVC_HOME', () => {
    const { config } = load({}, { home: path.join(dir, 'flag-home') });
    expect(config.home).toBe(path.join(dir, 'flag-home'));
    expect(config.paths.dagsDir).toBe(path.join(dir, 'flag-home', 'dags'));
  });

  it('reads SVC_CONFIG instead of $SVC_HOME/config.yaml, and --config instead of both', async () => {
    await writeConfig('server:\n  port: 8001\n');
    const envFile = await writeConfig('server:\n  port: 8002\n', path.join(dir, 'env.yaml'));
    const flagFile = await writeConfig('server:\n  port: 8003\n', path.join(dir, 'flag.yaml'));
    expect(load({ SVC_CONFIG: envFile }).config.server.port).toBe(8002);
    const viaFlag = load({ SVC_CONFIG: envFile }, { config: flagFile });
    expect(viaFlag.config.server.port).toBe(8003);
    expect(viaFlag.configFile).toBe(flagFile);
  });

  it('lets the file option beat --config', async () => {
    const flagFile = await writeConfig('server:\n  port: 8003\n', path.join(dir, 'flag.yaml'));
    const option = await writeConfig('server:\n  port: 8004\n', path.join(dir, 'option.yaml'));
    expect(load({}, { config: flagFile }, { file: option }).config.server.port).toBe(8004);
  });

  it('treats an empty environment variable as unset', async () => {
    await writeConfig('server:\n  port: 8001\n');
    const { config } = load({ SVC_PORT: '', SVC_HOST: '', SVC_REDIS_URL: '' });
    expect(config.server.port).toBe(8001);
    expect(config.server.host).toBe('localhost');
    expect(config.redis).toBeUndefined();
  });

  it('accepts numeric flags given as text, as a CLI parser may pass them', () => {
    expect(load({}, { port: '9001', concurrency: '8' }).config).toMatchObject({
      server: { port: 9001 },
      worker: { concurrency: 8 },
    });
  });
});

describe('loadConfig paths', () => {
  it('resolves relative paths in the config file against SVC_HOME', async () => {
    await writeConfig('paths:\n  dagsDir: my-dags\n  logDir: ../shared-logs\n');
    const { config } = load();
    expect(config.paths.dagsDir).toBe(path.join(svcHome(), 'my-dags'));
    expect(config.paths.logDir).toBe(path.join(dir, 'shared-logs'));
  });

  it('resolves relative paths from env and flags against the working directory', () => {
    const { config } = load({ SVC_DATA_DIR: 'data-env' }, { dags: './dags-flag' });
    expect(config.paths.dataDir).toBe(path.join(dir, 'data-env'));
    expect(config.paths.dagsDir).toBe(path.join(dir, 'dags-flag'));
  });

  it('expands ~ in path values from the file, env and flags', async () => {
    await writeConfig('paths:\n  dagsDir: ~/dags-file\n');
    const { config } = load({ SVC_DATA_DIR: '~/data-env' }, { logDir: '~/logs-flag' });
    expect(config.paths).toEqual({
      dagsDir: path.join(userHome(), 'dags-file'),
      dataDir: path.join(userHome(), 'data-env'),
      logDir: path.join(userHome(), 'logs-flag'),
    });
    expect(load({ SVC_HOME: '~/svc' }).config.home).toBe(path.join(userHome(), 'svc'));
  });
});

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

describe('loadConfig errors', () => {
  it('rejects an unknown key in the file, naming the file, the key path and a likely fix', async () => {
    const file = await writeConfig('server:\n  prot: 9000\n');
    const message = configErrorOf(() => load()).message;
    expect(message).toContain(file);
    expect(message).toContain('unknown key server.prot');
    expect(message).toContain('did you mean "port"?');
  });

  it('rejects an unknown top-level key, listing the keys accepted there', async () => {
    await writeConfig('colour: blue\n');
    const message = configErrorOf(() => load()).message;
    expect(message).toContain('unknown key colour: remove it or fix its spelling');
    expect(message).toContain('the top level accepts: paths, server, defaultShell');
  });

  it('rejects invalid YAML, naming the file and the line', async () => {
    const file = await writeConfig('server:\n  port: [8080,\nworker: {}\n');
    const message = configErrorOf(() => load()).message;
    expect(message).toMatch(
      new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not valid YAML: .* at line 3`),
    );
  });

  it('rejects a file value of the wrong type, naming the file, the path, the value and the fix', async () => {
    const file = await writeConfig('server:\n  port: "8080x"\n');
    expect(configErrorOf(() => load()).message).toBe(
      `${file}: server.port = "8080x" is invalid: use an integer from 1 to 65535, or 0 for any free port`,
    );
  });

  it('rejects a non-numeric SVC_PORT, naming the variable and the value', () => {
    expect(configErrorOf(() => load({ SVC_PORT: 'abc' })).message).toBe(
      'SVC_PORT="abc" is not a port number: use an integer from 1 to 65535, or 0 for any free port',
    );
  });

  it('rejects an out-of-range SVC_PORT and --port', () => {
    expect(configErrorOf(() => load({ SVC_PORT: '70000' })).message).toContain('SVC_PORT="70000"');
    expect(configErrorOf(() => load({}, { port: -1 })).message).toBe(
      '--port=-1 is not a port number: use an integer from 1 to 65535, or 0 for any free port',
    );
  });

  it('rejects a non-integer SVC_WORKER_CONCURRENCY, naming the variable', () => {
    expect(configErrorOf(() => load({ SVC_WORKER_CONCURRENCY: '2.5' })).message).toBe(
      'SVC_WORKER_CONCURRENCY="2.5" is not an integer: use a whole number in digits, e.g. 30',
    );
  });

  it('names the variable when its value fails the schema', () => {
    expect(configErrorOf(() => load({ SVC_WORKER_CONCURRENCY: '0' })).message).toBe(
      'SVC_WORKER_CONCURRENCY: worker.concurrency = 0 is invalid: use an integer of at least 1, e.g. 4',
    );
  });

  it('rejects an SVC_HEADLESS that is not true, false, 1 or 0', () => {
    expect(configErrorOf(() => load({ SVC_HEADLESS: 'yes' })).message).toBe(
      'SVC_HEADLESS="yes" is not a boolean: use true, false, 1 or 0',
    );
  });

  it.each([
    ['true', true],
    ['1', true],
    ['false', false],
    ['0', false],
  ])('reads SVC_HEADLESS=%s as %s', (text, expected) => {
    expect(load({ SVC_HEADLESS: text }).config.server.headless).toBe(expected);
  });

  it.each([
    ['gpu', '"gpu" has no "="'],
    ['=x', '"=x" has an empty label name'],
    ['gpu=', '"gpu=" has an empty value'],
    ['a=1,a=2', 'label "a" is given twice'],
  ])('rejects SVC_WORKER_LABELS=%s, naming the value', (text, reason) => {
    expect(configErrorOf(() => load({ SVC_WORKER_LABELS: text })).message).toBe(
      `SVC_WORKER_LABELS=${JSON.stringify(text)} is not a list of labels (${reason}): ` +
        'use key=value pairs separated by commas, e.g. gpu=true,region=eu',
    );
  });

  it('reads SVC_WORKER_LABELS as a record that replaces the labels of the file', async () => {
    await writeConfig('worker:\n  labels:\n    zone: a\n');
    expect(load().config.worker.labels).toEqual({ zone: 'a' });
    expect(load({ SVC_WORKER_LABELS: 'gpu=true, region = eu' }).config.worker.labels).toEqual({
      gpu: 'true',
      region: 'eu',
    });
  });

  it('rejects an unquoted boolean label value in the file with a quoting hint', async () => {
    await writeConfig('worker:\n  labels:\n    gpu: true\n');
    expect(configErrorOf(() => load()).message).toContain(
      'worker.labels.gpu = true is invalid: use a string label value; quote it in YAML',
    );
  });

  it('rejects an unknown time zone from the file and from SVC_TZ', async () => {
    const file = await writeConfig('server:\n  tz: Mars/Olympus\n');
    expect(configErrorOf(() => load()).message).toMatch(
      `${file}: server.tz = "Mars/Olympus" is invalid: use an IANA time zone name`,
    );
    expect(configErrorOf(() => load({ SVC_TZ: 'Nowhere/City' })).message).toMatch(
      /^SVC_TZ: server\.tz = "Nowhere\/City" is invalid: use an IANA time zone name/,
    );
  });

  it('accepts an IANA time zone', () => {
    expect(load({ SVC_TZ: 'Europe/Berlin' }).config.server.tz).toBe('Europe/Berlin');
  });

  it('rejects an explicitly named config file that does not exist, naming the path', () => {
    const missing = path.join(dir, 'nope.yaml');
    expect(configErrorOf(() => load({}, { config: missing })).message).toBe(
      `config file ${missing} (from --config) does not exist: create it or fix the path`,
    );
    expect(configErrorOf(() => load({ SVC_CONFIG: missing })).message).toContain(
      `config file ${missing} (from SVC_CONFIG) does not exist`,
    );
  });

  it('rejects home in the config file, pointing to SVC_HOME', async () => {
    await writeConfig('home: /srv/trellis\n');
    expect(configErrorOf(() => load()).message).toContain(
      'cannot be set in the config file, which is found through it: set SVC_HOME or --home instead',
    );
  });

  it('rejects a file whose top level is not a mapping', async () => {
    await writeConfig('- a\n- b\n');
    expect(configErrorOf(() => load()).message).toContain('the top level is a list, not a mapping');
  });

  it('rejects a file holding several YAML documents', async () => {
    await writeConfig('server: {}\n---\nworker: {}\n');
    expect(configErrorOf(() => load()).message).toContain('holds 2 YAML documents: keep one');
  });

  it('reads SVC_REDIS_URL as distributed mode and rejects a URL that is not redis://', () => {
    expect(load({ SVC_REDIS_URL: 'redis://cache:6379' }).config.redis).toEqual({
      url: 'redis://cache:6379',
    });
    expect(configErrorOf(() => load({ SVC_REDIS_URL: 'http://cache' })).message).toBe(
      'SVC_REDIS_URL: redis.url = "http://cache" is invalid: use a redis:// or rediss:// URL, ' +
        'e.g. redis://localhost:6379',
    );
  });

  it('reports malformed variables and flags together with the problems of the file', async () => {
    await writeConfig('server:\n  tz: Mars/Olympus\n');
    const error = configErrorOf(() => load({ SVC_PORT: 'abc' }, { concurrency: 'x' }));
    expect(error.problems).toEqual([
      'SVC_PORT="abc" is not a port number: use an integer from 1 to 65535, or 0 for any free port',
      '--concurrency="x" is not an integer: use a whole number in digits, e.g. 30',
      expect.stringContaining('server.tz = "Mars/Olympus" is invalid'),
    ]);
  });

  it('reports every problem of the file at once', async () => {
    await writeConfig('server:\n  port: -1\n  headless: "no"\n');
    const error = configErrorOf(() => load());
    expect(error.problems).toHaveLength(2);
    expect(error.message).toMatch(/^2 config problems:\n {2}- /);
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
