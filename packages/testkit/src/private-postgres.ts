import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';

const run = promisify(execFile);

const PG_ROOT = '/usr/lib/postgresql';

/** The binaries of Debian's postgresql package (scripts/setup.sh installs it): newest version. */
const pgBin = (): string => {
  const versions = existsSync(PG_ROOT)
    ? readdirSync(PG_ROOT).filter((v) => existsSync(join(PG_ROOT, v, 'bin', 'initdb')))
    : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (newest === undefined)
    throw new Error(
      `no initdb under ${PG_ROOT}: install the postgresql package (scripts/setup.sh)`,
    );
  return join(PG_ROOT, newest, 'bin');
};

/** A private PostgreSQL server for one test file: never the machine's own server on 5432. */
export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication, loopback only). */
  readonly url: string;
  readonly port: number;
  /** A URL of a fresh, empty database on this server (one per store under test). */
  createDatabase(name: string): Promise<string>;
  /** Stops the server (fast shutdown: connections are cut), keeping its data. */
  pause(): Promise<void>;
  /** Starts it again on the same port and data. */
  resume(): Promise<void>;
  /** Stops it and removes its folder. */
  stop(): Promise<void>;
}

/** Runs a PostgreSQL binary as the `postgres` user (initdb refuses root). */
const asPostgres = async (bin: string, args: readonly string[]): Promise<string> => {
  const cmd = join(pgBin(), bin);
  const asRoot = process.getuid?.() === 0;
  const { stdout } = await run(
    asRoot ? 'runuser' : cmd,
    asRoot ? ['-u', 'postgres', '--', cmd, ...args] : [...args],
    { timeout: 60_000 },
  );
  return stdout;
};

const ownByPostgres = (dir: string): void => {
  if (process.getuid?.() !== 0) return;
  const { uid, gid } = userIds();
  chownSync(dir, uid, gid);
};

const userIds = (): { uid: number; gid: number } => {
  try {
    const id = (flag: string): number => Number(execFileSync('id', [flag, 'postgres']).toString());
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    throw new Error('no postgres user: install the postgresql package (scripts/setup.sh)');
  }
};

/**
 * Starts a PostgreSQL server in a temp folder (data and unix socket inside it), on a free
 * loopback port, with fsync off (tests need speed, not durability). Takes a few seconds.
 */
export const startPostgres = async (): Promise<PrivatePostgres> => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-pg-'));
  const data = join(dir, 'data');
  const sock = join(dir, 'sock');
  mkdirSync(sock);
  ownByPostgres(dir);
  ownByPostgres(sock);
  await asPostgres('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '-N']);
  const port = await freePort();
  const opts = `-p ${port} -k ${sock} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`;
  const start = (): Promise<string> =>
    asPostgres('pg_ctl', ['-D', data, '-o', opts, '-l', join(dir, 'server.log'), '-w', 'start']);
  const halt = (mode: string): Promise<string> =>
    asPostgres('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']);
  await start();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let running = true;
  return {
    url,
    port,
    createDatabase: async (name) => {
      await asPostgres('createdb', ['-h', sock, '-p', String(port), '-U', 'postgres', name]);
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    pause: async () => {
      await halt('fast');
      running = false;
    },
    resume: async () => {
      await start();
      running = true;
    },
    stop: async () => {
      if (running) await halt('immediate').catch(() => undefined);
      running = false;
      rmSync(dir, { recursive: true, force: true });
    },
  };
};
