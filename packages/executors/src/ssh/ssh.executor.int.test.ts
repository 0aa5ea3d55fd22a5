import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contextOf, stepContext } from '../../test/support/exec-context.js';
import { PASSWORD_USER, startSshd, type TestSshd } from '../../test/support/sshd.js';
import { SshExecutor } from './ssh.executor.js';

const ssh = new SshExecutor();
let sshd: TestSshd;
let dir: string;

beforeAll(async () => {
  sshd = await startSshd();
  dir = await mkdtemp(join(tmpdir(), 'trellis-ssh-'));
}, 60_000);
afterAll(async () => {
  await sshd.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Config for root with the client key and the right known_hosts. */
const rootConfig = (over: Record<string, unknown> = {}) => ({
  user: 'root',
  host: '127.0.0.1',
  port: String(sshd.port),
  key: sshd.clientKey,
  knownHostFile: sshd.knownHosts,
  ...over,
});

const run = async (
  fields: Record<string, unknown>,
  config: Record<string, unknown>,
  env: Record<string, string> = {},
) => {
  const t = stepContext({ executor: { type: 'ssh', config }, ...fields }, dir, {
    captureLimit: 1 << 16,
    env,
  });
  const outcome = await ssh.run(t.ctx);
  return { outcome, out: t.out.text, err: t.err.text, t };
};

describe('ssh executor (real sshd on loopback)', { timeout: 30_000 }, () => {
  it('runs a command with a key and reports its output and exit code', async () => {
    const { outcome, out, err } = await run(
      { command: 'sh -c "echo out; echo err >&2; exit 3"' },
      rootConfig(),
    );
    expect(outcome.exitCode).toBe(3);
    expect(out).toBe('out\n');
    expect(err).toBe('err\n');
    expect(outcome.output).toBe('out\n');
  });

  it('runs a script, honouring a shebang line', async () => {
    const plain = await run({ script: 'echo one\necho "two $((1 + 1))"\n' }, rootConfig());
    expect(plain.outcome.exitCode).toBe(0);
    expect(plain.out).toBe('one\ntwo 2\n');
    const shebang = await run(
      { script: '#!/bin/sh -e\necho "via $0" | sed "s|/.*/|/x/|"\nfalse\necho unreachable\n' },
      rootConfig(),
    );
    expect(shebang.out).toMatch(/^via \/x\/tmp\./);
    expect(shebang.outcome.exitCode).toBe(1);
  });

  it('logs in with a password', async () => {
    const { outcome, out } = await run(
      { command: 'whoami' },
      rootConfig({ user: PASSWORD_USER, key: undefined, password: sshd.password }),
      { HOME: dir }, // no default keys there
    );
    expect(outcome.error).toBeUndefined();
    expect(out).toBe(`${PASSWORD_USER}\n`);
  });

  it('tries the standard keys in HOME/.ssh when no key is set', async () => {
    const home = join(dir, 'home');
    await mkdir(join(home, '.ssh'), { recursive: true });
    await copyFile(sshd.clientKey, join(home, '.ssh', 'id_ed25519'));
    const { outcome, out } = await run(
      { command: 'echo hi' },
      rootConfig({ key: undefined, knownHostFile: '~/kh' }),
      { HOME: home },
    ).catch((e: unknown) => {
      throw e;
    });
    // ~/kh does not exist: strict checking needs the file
    expect(outcome.error).toContain(`cannot read knownHostFile ${join(home, 'kh')}`);
    expect(out).toBe('');
    await copyFile(sshd.knownHosts, join(home, 'kh'));
    const ok = await run(
      { command: 'echo hi' },
      rootConfig({ key: undefined, knownHostFile: '~/kh' }),
      { HOME: home },
    );
    expect(ok.outcome.exitCode).toBe(0);
    expect(ok.out).toBe('hi\n');
  });

  it('refuses a host whose key does not match knownHostFile', async () => {
    const other = join(dir, 'wrong_known_hosts');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'other_host')]);
    const { readFileSync } = await import('node:fs');
    const otherKey = readFileSync(join(dir, 'other_host.pub'), 'utf8').split(' ').slice(0, 2);
    await writeFile(other, `[127.0.0.1]:${sshd.port} ${otherKey.join(' ')}\n`);
    const { outcome } = await run({ command: 'echo no' }, rootConfig({ knownHostFile: other }));
    expect(outcome.exitCode).toBeNull();
    expect(outcome.error).toContain(`the host key of [127.0.0.1]:${sshd.port} does not match`);
  });

  it('refuses an unknown host, unless strictHostKey is false', async () => {
    const empty = join(dir, 'empty_known_hosts');
    await writeFile(empty, '');
    const { outcome } = await run({ command: 'echo no' }, rootConfig({ knownHostFile: empty }));
    expect(outcome.error).toContain(
      `is not in ${empty}: add it (ssh-keyscan -p ${sshd.port} 127.0.0.1`,
    );
    const loose = await run(
      { command: 'echo yes' },
      rootConfig({ knownHostFile: empty, strictHostKey: false }),
    );
    expect(loose.out).toBe('yes\n');
  });

  it('says which key is unusable, and when no credential was accepted', async () => {
    const junk = join(dir, 'junk_key');
    await writeFile(junk, 'not a key\n');
    const bad = await run({ command: 'true' }, rootConfig({ key: junk }));
    expect(bad.outcome.error).toContain(`the ssh key ${junk} is not a usable private key`);
    const stranger = join(dir, 'stranger');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', stranger]);
    const denied = await run({ command: 'true' }, rootConfig({ key: stranger }));
    expect(denied.outcome.error).toBe(
      `ssh root@127.0.0.1:${sshd.port}: authentication failed: the server accepted none of the 1 credential(s) tried (key or password)`,
    );
  });

  it('reports a refused connection', async () => {
    const { outcome } = await run({ command: 'true' }, rootConfig({ port: '1' }));
    expect(outcome.error).toBe(
      'ssh root@127.0.0.1:1: connection refused: is sshd running and listening on that port?',
    );
  });

  it('signals the remote process on stop', async () => {
    // OpenSSH delivers signal requests only to sessions of non-root users (privilege separation)
    const t = stepContext(
      {
        executor: {
          type: 'ssh',
          config: rootConfig({ user: PASSWORD_USER, key: undefined, password: sshd.password }),
        },
        command: `sh -c 'trap "echo got TERM; exit 143" TERM; echo ready; while :; do sleep 0.1; done'`,
      },
      dir,
      { env: { HOME: dir } },
    );
    const running = ssh.run(t.ctx);
    await t.out.until('ready');
    t.stopper.abort();
    const outcome = await running;
    expect(t.out.text).toContain('got TERM');
    expect(outcome.signal).toBe('SIGTERM');
  });

  it('closes the session after the grace period when the signal is not honoured', async () => {
    const t = stepContext(
      { executor: { type: 'ssh', config: rootConfig() }, command: 'echo ready; sleep 5' },
      dir,
      { graceMs: 200 },
    );
    const running = ssh.run(t.ctx);
    await t.out.until('ready');
    t.stopper.abort();
    const outcome = await running;
    expect(outcome).toMatchObject({ exitCode: null, signal: 'SIGTERM' });
  });

  it('uses the DAG-level ssh settings for steps without an executor', async () => {
    const t = contextOf({ ssh: rootConfig(), steps: ['echo "from $(whoami)"'] }, dir);
    expect(t.ctx.step.executor.type).toBe('ssh');
    const outcome = await ssh.run(t.ctx);
    expect(outcome.exitCode).toBe(0);
    expect(t.out.text).toBe('from root\n');
  });

  it('lets a step-level config replace the DAG-level one completely', async () => {
    const t = contextOf(
      {
        ssh: {
          user: 'nobody',
          host: '127.0.0.1',
          port: '1',
          password: 'x',
          knownHostFile: sshd.knownHosts,
        },
        steps: [
          {
            name: 'own',
            executor: {
              type: 'ssh',
              config: {
                user: 'root',
                host: '127.0.0.1',
                port: String(sshd.port),
                key: sshd.clientKey,
                strictHostKey: false,
              },
            },
            command: 'echo own settings',
          },
        ],
      },
      dir,
    );
    expect(t.ctx.step.executor.config).toMatchObject({ knownHostFile: '~/.ssh/known_hosts' });
    expect(t.ctx.step.executor.config).not.toHaveProperty('password');
    const outcome = await ssh.run(t.ctx);
    expect(outcome.exitCode).toBe(0);
    expect(t.out.text).toBe('own settings\n');
  });
});
