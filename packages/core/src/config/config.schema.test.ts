import { describe, expect, it } from 'vitest';
import { ConfigSchema, isTimeZone, knownKeysAt, normalizeBasePath } from './config.schema.js';
import { FLAG_MAP } from './config-flags.js';
import { ENV_MAP } from './env-map.js';

/** A config with every optional section present, to look paths up in. */
const full = ConfigSchema.parse({ home: '/h', redis: { url: 'redis://localhost:6379' } });

/**
 * True when `dotted` is a field of the parsed config, or a key the file accepts that parsing
 * folds into another field (`auth.basic.username` becomes an entry of `auth.users`).
 */
const hasPath = (dotted: string): boolean => {
  const keys = dotted.split('.');
  const parent = keys.slice(0, -1);
  const last = keys[keys.length - 1] ?? '';
  if (knownKeysAt(parent)?.includes(last)) return true;
  let node: unknown = full;
  for (const key of keys) {
    if (typeof node !== 'object' || node === null || !(key in node)) return false;
    node = (node as Record<string, unknown>)[key];
  }
  return true;
};

describe('ConfigSchema', () => {
  it('fills every field from its default given only home', () => {
    expect(full.paths.dagsDir).toBe('/h/dags');
    expect(full.server).toEqual({
      host: 'localhost',
      port: 8080,
      basePath: '',
      headless: false,
      tz: '',
      metricsPublic: true,
      tlsCertFile: '',
      tlsKeyFile: '',
    });
    expect(full.coordinator.port).toBe(50055);
    expect(full.worker.outboxMaxBytes).toBe(64 * 1024 * 1024);
    expect(full.scheduler.zombieDetectionIntervalSec).toBe(45);
    expect(full.auth).toEqual({ mode: 'none', users: [], tokens: [] });
    expect(full.remoteNodes).toEqual([]);
  });

  it('keeps absolute paths and resolves relative ones against home', () => {
    const c = ConfigSchema.parse({ home: '/h', paths: { dagsDir: '/abs', logDir: 'l/x' } });
    expect(c.paths).toEqual({ dagsDir: '/abs', dataDir: '/h/data', logDir: '/h/l/x' });
  });

  it('rejects a relative home', () => {
    expect(ConfigSchema.safeParse({ home: 'rel' }).success).toBe(false);
  });

  it('rejects unknown keys at every level', () => {
    for (const input of [
      { x: 1 },
      { server: { x: 1 } },
      { worker: { x: 1 } },
      { auth: { x: 1 } },
      { auth: { users: [{ name: 'a', password: 'p', role: 'admin', x: 1 }] } },
      { remoteNodes: [{ name: 'n', apiBaseURL: 'http://h/api/v2', x: 1 }] },
    ]) {
      expect(ConfigSchema.safeParse({ home: '/h', ...input }).success).toBe(false);
    }
  });

  it('allows zombie detection to be disabled with 0 but not a worker concurrency of 0', () => {
    expect(
      ConfigSchema.safeParse({ home: '/h', scheduler: { zombieDetectionIntervalSec: 0 } }).success,
    ).toBe(true);
    expect(ConfigSchema.safeParse({ home: '/h', worker: { concurrency: 0 } }).success).toBe(false);
  });
});

describe('normalizeBasePath', () => {
  it.each([
    ['', ''],
    ['/', ''],
    ['  /a/  ', '/a'],
    ['a/b', '/a/b'],
    ['/a//b///', '/a/b'],
  ])('turns %j into %j', (input, expected) => {
    expect(normalizeBasePath(input)).toBe(expected);
  });
});

describe('isTimeZone', () => {
  it('accepts IANA zone names and the empty string (local zone)', () => {
    for (const tz of ['', 'UTC', 'Europe/Berlin', 'America/New_York'])
      expect(isTimeZone(tz)).toBe(true);
  });

  it('rejects names the runtime does not know', () => {
    for (const tz of ['Mars/Olympus', 'Berlin', 'not a zone']) expect(isTimeZone(tz)).toBe(false);
  });
});

describe('ENV_MAP and FLAG_MAP', () => {
  it('list every documented SVC_* variable once, each with a description', () => {
    const names = ENV_MAP.map((b) => b.name);
    expect(new Set(names).size).toBe(names.length);
    for (const required of [
      'SVC_HOME',
      'SVC_CONFIG',
      'SVC_DAGS_DIR',
      'SVC_DATA_DIR',
      'SVC_LOG_DIR',
      'SVC_HOST',
      'SVC_PORT',
      'SVC_BASE_PATH',
      'SVC_HEADLESS',
      'SVC_TZ',
      'SVC_DEFAULT_SHELL',
      'SVC_REDIS_URL',
      'SVC_COORDINATOR_HOST',
      'SVC_COORDINATOR_PORT',
      'SVC_COORDINATOR_ADVERTISE',
      'SVC_WORKER_ID',
      'SVC_WORKER_LABELS',
      'SVC_WORKER_CONCURRENCY',
      'SVC_WORKER_OUTBOX_MAX_BYTES',
      'SVC_HIST_RETENTION_DAYS',
      'SVC_METRICS_PUBLIC',
      'SVC_AUTH_MODE',
      'SVC_AUTH_BASIC_USERNAME',
      'SVC_AUTH_BASIC_PASSWORD',
      'SVC_AUTH_TOKEN',
    ]) {
      expect(names).toContain(required);
    }
    for (const b of ENV_MAP) expect(b.description.length).toBeGreaterThan(10);
  });

  it('map every variable and flag to a field that exists in the config', () => {
    const paths = [...ENV_MAP, ...Object.values(FLAG_MAP)].flatMap((b) => (b.path ? [b.path] : []));
    expect(paths.filter((p) => !hasPath(p))).toEqual([]);
  });
});

describe('server TLS files', () => {
  it('wants both the certificate and the key, and says which is missing', () => {
    const r = ConfigSchema.safeParse({ home: '/h', server: { tlsCertFile: 'api.crt' } });
    expect(r.success).toBe(false);
    expect(JSON.stringify(r.error?.issues)).toContain(
      'set both server.tlsCertFile and server.tlsKeyFile for HTTPS (or neither for HTTP): tlsKeyFile is missing',
    );
    const both = { tlsCertFile: 'api.crt', tlsKeyFile: 'api.key' };
    expect(ConfigSchema.parse({ home: '/h', server: both }).server).toMatchObject(both);
  });
});

describe('webhooks', () => {
  const home = '/srv/trellis';
  const sub = { name: 'ci', url: 'https://ci.example.com/hook', secret: '0123456789abcdef' };

  it('defaults to no subscriptions, 24 h of retries from 1 s doubling up to 1 h', () => {
    expect(ConfigSchema.parse({ home }).webhooks).toEqual({
      subscriptions: [],
      retryBaseDelayMs: 1000,
      retryMaxDelayMs: 3_600_000,
      retryForSec: 86_400,
      timeoutMs: 10_000,
      maxJournalEntries: 10_000,
    });
    expect(
      ConfigSchema.parse({ home, webhooks: { subscriptions: [sub] } }).webhooks.subscriptions,
    ).toEqual([{ ...sub, events: ['run:finished'], dags: [], maxConcurrency: 4 }]);
  });

  it('refuses a bad URL, a short secret, an unknown event and a repeated name, saying what to write', () => {
    const r = ConfigSchema.safeParse({
      home,
      webhooks: {
        subscriptions: [
          { ...sub, name: 'first', url: 'ftp://x', secret: 'short', events: ['run:done'] },
          sub,
          sub,
        ],
      },
    });
    const messages = r.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`) ?? [];
    expect(messages).toEqual([
      expect.stringMatching(/^webhooks\.subscriptions\.0\.url: use an absolute http\(s\) URL/),
      expect.stringMatching(
        /^webhooks\.subscriptions\.0\.secret: use a random string of at least 16/,
      ),
      expect.stringMatching(
        /^webhooks\.subscriptions\.0\.events\.0: use event types .*run:finished/,
      ),
      expect.stringMatching(
        /^webhooks\.subscriptions\.2\.name: rename or remove this subscription/,
      ),
    ]);
  });
});
