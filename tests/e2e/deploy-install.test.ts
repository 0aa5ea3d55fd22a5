import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './support/start-all.js';
import {
  docker,
  must,
  packedTarball,
  requireBaseImages,
  run,
  until,
} from './support/docker-cli.js';

/**
 * deploy/install.sh (issue 19, item 6) followed on a clean host without Docker: a container of
 * local/trellis-host:20 (Node 20, npm, busybox, Debian's useradd, systemd-analyze; no network,
 * so the tarball must install offline). The commands are docs/operations.md's ("Install with
 * the install script").
 */

const name = `trellis-e2e-install-${randomBytes(4).toString('hex')}`;
let firstRun: string;

const exec = (...args: string[]) => must('docker', ['exec', name, ...args]);
const execAs = (user: string, ...args: string[]) =>
  must('docker', ['exec', '-u', user, name, ...args]);

/** `Key=value` lines of an installed unit, in order. */
const unitLines = async (unit: string, key: string): Promise<string[]> =>
  (await exec('cat', `/etc/systemd/system/${unit}`))
    .split('\n')
    .filter((l) => l.startsWith(`${key}=`))
    .map((l) => l.slice(key.length + 1));

beforeAll(async () => {
  await requireBaseImages();
  const tgz = await packedTarball();
  await docker(
    'run',
    '-d',
    '--name',
    name,
    '--network',
    'none',
    '-v',
    `${join(ROOT, 'deploy')}:/src/deploy:ro`,
    '-v',
    `${tgz}:/src/trellis.tgz:ro`,
    'local/trellis-host:20',
  );
  firstRun = await exec('sh', '/src/deploy/install.sh', '/src/trellis.tgz');
}, 600_000);

afterAll(async () => {
  await run('docker', ['rm', '-f', '-v', name]);
});

describe('deploy/install.sh on a clean host', { timeout: 120_000 }, () => {
  it('creates the trellis system user, with no login shell', async () => {
    expect(firstRun).toContain('install: user trellis created');
    const entry = (await exec('grep', '^trellis:', '/etc/passwd')).trim().split(':');
    expect(Number(entry[2])).toBeLessThan(1000);
    expect(entry.slice(5)).toEqual(['/var/lib/trellis', '/usr/sbin/nologin']);
  });

  it('gives a working `trellis --version` to that user', async () => {
    const version = (await execAs('trellis', 'trellis', '--version')).trim();
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
    expect(firstRun).toContain(`installed /usr/local/bin/trellis ${version}`);
  });

  it('installs units that systemd-analyze verify accepts, starting paths that exist', async () => {
    const units = ['trellis-coordinator.service', 'trellis-worker@.service'];
    for (const unit of units) {
      for (const cmd of await unitLines(unit, 'ExecStart')) {
        const bin = cmd.split(' ')[0] ?? '';
        expect((await run('docker', ['exec', name, 'test', '-x', bin])).code, bin).toBe(0);
      }
    }
    const verify = await run('docker', [
      'exec',
      name,
      'systemd-analyze',
      'verify',
      '/etc/systemd/system/trellis-coordinator.service',
      '/etc/systemd/system/trellis-worker@1.service',
    ]);
    expect(`${verify.stdout}${verify.stderr}`).toBe('');
    expect(verify.code).toBe(0);
  });

  it('puts configs and secret files in /etc/trellis, readable by the service user only', async () => {
    const ls = await exec('ls', '-ln', '/etc/trellis');
    const uid = (await exec('id', '-u', 'trellis')).trim();
    for (const f of ['config.yaml', 'worker.yaml', 'coordinator.env', 'worker.env'])
      expect(ls).toMatch(new RegExp(`-rw-r----- +1 0 +${uid} .* ${f.replace('.', '\\.')}\\n`));
    const homes = await exec(
      'stat',
      '-c',
      '%U %a %n',
      '/var/lib/trellis',
      '/var/lib/trellis-worker',
    );
    expect(homes).toBe('trellis 750 /var/lib/trellis\ntrellis 750 /var/lib/trellis-worker\n');
  });

  it('is idempotent: a second run keeps the user and the edited configs', async () => {
    await exec('sh', '-c', 'echo "# edited" >> /etc/trellis/config.yaml');
    const again = await exec('sh', '/src/deploy/install.sh', '/src/trellis.tgz');
    expect(again).toContain('install: user trellis exists');
    expect(again).toContain('install: kept /etc/trellis/config.yaml');
    expect(await exec('tail', '-1', '/etc/trellis/config.yaml')).toBe('# edited\n');
  });

  it("serves /health when the coordinator unit's ExecStart runs as the service user", async () => {
    // An operator's single-host config in place of the fleet example (which needs Redis and TLS).
    await exec('sh', '-c', 'printf "server:\\n  port: 8080\\n" > /etc/trellis/config.yaml');
    const [cmd] = await unitLines('trellis-coordinator.service', 'ExecStart');
    const envs = (await unitLines('trellis-coordinator.service', 'Environment')).flatMap((e) => [
      '-e',
      e,
    ]);
    const [cwd] = await unitLines('trellis-coordinator.service', 'WorkingDirectory');
    await must('docker', [
      'exec',
      '-d',
      '-u',
      'trellis',
      '-w',
      cwd ?? '/',
      ...envs,
      name,
      ...(cmd ?? '').split(' '),
    ]);
    const body = await until(
      'the coordinator serving /api/v2/health',
      async () => {
        const r = await run('docker', [
          'exec',
          name,
          'wget',
          '-qO-',
          'http://127.0.0.1:8080/api/v2/health',
        ]);
        return r.code === 0 ? r.stdout : undefined;
      },
      async () => exec('sh', '-c', 'ls -la /var/lib/trellis; ps'),
    );
    expect(JSON.parse(body)).toMatchObject({ status: 'healthy' });
    const ps = await exec('ps', '-o', 'user,args');
    expect(ps).toMatch(/trellis +node \/usr\/local\/bin\/trellis start-all/);
  });
});
