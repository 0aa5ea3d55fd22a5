import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useConfigHome } from '../../test/support/config-home.js';
import { loadConfig } from './load-config.js';

/** Defaults, the precedence of the sources, and paths. */
const { dir, userHome, svcHome, writeConfig, load } = useConfigHome();

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
        tlsCertFile: '',
        tlsKeyFile: '',
      },
      defaultShell: '',
      coordinator: {
        host: '127.0.0.1',
        port: 50055,
        advertise: '',
        tlsCertFile: '',
        tlsKeyFile: '',
        tlsCaFile: '',
        tokens: [],
        insecure: false,
      },
      worker: {
        id: '',
        labels: {},
        concurrency: 4,
        outboxMaxBytes: 67_108_864,
        coordinators: [],
        token: '',
        tlsCertFile: '',
        tlsKeyFile: '',
        tlsCaFile: '',
      },
      queues: [],
      histRetentionDays: 30,
      scheduler: { zombieDetectionIntervalSec: 45 },
      auth: { mode: 'none', users: [], tokens: [] },
      remoteNodes: [],
      webhooks: {
        subscriptions: [],
        retryBaseDelayMs: 1000,
        retryMaxDelayMs: 3_600_000,
        retryForSec: 86_400,
        timeoutMs: 10_000,
        maxJournalEntries: 10_000,
      },
    });
    expect(config.redis).toBeUndefined();
    expect(warnings).toEqual([]);
    expect(configFile).toBeUndefined();
  });

  it('defaults SVC_HOME to ~/.trellis in the HOME directory', () => {
    const { config } = loadConfig({ env: { HOME: userHome() }, argv: {}, cwd: dir() });
    expect(config.home).toBe(path.join(userHome(), '.trellis'));
  });

  it('defaults SVC_DAGS_DIR, SVC_DATA_DIR and SVC_LOG_DIR to folders under SVC_HOME', () => {
    const { config } = loadConfig({ env: { HOME: userHome() }, argv: {}, cwd: dir() });
    const home = path.join(userHome(), '.trellis');
    expect(config.paths).toEqual({
      dagsDir: path.join(home, 'dags'),
      dataDir: path.join(home, 'data'),
      logDir: path.join(home, 'logs'),
    });
  });

  it('uses the OS user home for ~ when env has no HOME', async () => {
    const file = await writeConfig('', path.join(dir(), 'empty.yaml'));
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
    const { config } = load({}, { home: path.join(dir(), 'flag-home') });
    expect(config.home).toBe(path.join(dir(), 'flag-home'));
    expect(config.paths.dagsDir).toBe(path.join(dir(), 'flag-home', 'dags'));
  });

  it('reads SVC_CONFIG instead of $SVC_HOME/config.yaml, and --config instead of both', async () => {
    await writeConfig('server:\n  port: 8001\n');
    const envFile = await writeConfig('server:\n  port: 8002\n', path.join(dir(), 'env.yaml'));
    const flagFile = await writeConfig('server:\n  port: 8003\n', path.join(dir(), 'flag.yaml'));
    expect(load({ SVC_CONFIG: envFile }).config.server.port).toBe(8002);
    const viaFlag = load({ SVC_CONFIG: envFile }, { config: flagFile });
    expect(viaFlag.config.server.port).toBe(8003);
    expect(viaFlag.configFile).toBe(flagFile);
  });

  it('lets the file option beat --config', async () => {
    const flagFile = await writeConfig('server:\n  port: 8003\n', path.join(dir(), 'flag.yaml'));
    const option = await writeConfig('server:\n  port: 8004\n', path.join(dir(), 'option.yaml'));
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
    expect(config.paths.logDir).toBe(path.join(dir(), 'shared-logs'));
  });

  it('resolves relative paths from env and flags against the working directory', () => {
    const { config } = load({ SVC_DATA_DIR: 'data-env' }, { dags: './dags-flag' });
    expect(config.paths.dataDir).toBe(path.join(dir(), 'data-env'));
    expect(config.paths.dagsDir).toBe(path.join(dir(), 'dags-flag'));
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
