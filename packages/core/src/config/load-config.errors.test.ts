import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configErrorOf, useConfigHome } from '../../test/support/config-home.js';

/** What loadConfig rejects and how it names each problem. */
const { dir, writeConfig, load } = useConfigHome();

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
    const missing = path.join(dir(), 'nope.yaml');
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
