import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The local account password logins use; `scripts/setup.sh` creates it (locked). */
export const PASSWORD_USER = 'trellis-ssh';

/** A throwaway OpenSSH server on 127.0.0.1. */
export interface TestSshd {
  readonly port: number;
  readonly dir: string;
  /** A client key root may log in with. */
  readonly clientKey: string;
  /** A known_hosts file holding this server's host key. */
  readonly knownHosts: string;
  /** The host key line (`ssh-ed25519 AAAA...`). */
  readonly hostKeyLine: string;
  /** The password set for {@link PASSWORD_USER} for this server's lifetime. */
  readonly password: string;
  stop(): Promise<void>;
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });

const keygen = (path: string): void => {
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path], { stdio: 'ignore' });
};

/**
 * Starts `sshd -D` as a child of the test process with its own host key, config and
 * authorized_keys in a temp dir; resolves once it logs that it listens. Root logs in with the
 * client key, {@link PASSWORD_USER} with a fresh random password.
 */
export const startSshd = async (): Promise<TestSshd> => {
  const dir = await mkdtemp(join(tmpdir(), 'trellis-sshd-'));
  keygen(join(dir, 'host_ed25519'));
  keygen(join(dir, 'client_ed25519'));
  await writeFile(join(dir, 'authorized_keys'), await readFile(join(dir, 'client_ed25519.pub')));
  const password = randomBytes(12).toString('base64url');
  try {
    execFileSync('chpasswd', [], {
      input: `${PASSWORD_USER}:${password}\n`,
      stdio: ['pipe', 'ignore', 'pipe'],
    });
  } catch (e) {
    throw new Error(
      `cannot set the password of the test account ${PASSWORD_USER} (${(e as Error).message.trim()}): run scripts/setup.sh as root, which creates it`,
    );
  }
  const port = await freePort();
  const hostKeyLine = (await readFile(join(dir, 'host_ed25519.pub'), 'utf8'))
    .split(' ')
    .slice(0, 2)
    .join(' ');
  const knownHosts = join(dir, 'known_hosts');
  await writeFile(knownHosts, `[127.0.0.1]:${port} ${hostKeyLine}\n`);
  await writeFile(
    join(dir, 'sshd_config'),
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${join(dir, 'host_ed25519')}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
      'PermitRootLogin prohibit-password',
      'PubkeyAuthentication yes',
      'PasswordAuthentication yes',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      'StrictModes no',
      '',
    ].join('\n'),
  );
  const proc: ChildProcess = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', join(dir, 'sshd_config')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  await new Promise<void>((resolve, reject) => {
    proc.stderr?.on('data', (c: Buffer) => {
      log += c.toString();
      if (log.includes('Server listening on')) resolve();
    });
    proc.once('exit', (code) => reject(new Error(`sshd exited with ${code}: ${log}`)));
    proc.once('error', reject);
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return {
    port,
    dir,
    clientKey: join(dir, 'client_ed25519'),
    knownHosts,
    hostKeyLine,
    password,
    stop: async () => {
      proc.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
};
