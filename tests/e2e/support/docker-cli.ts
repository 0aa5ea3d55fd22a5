import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './start-all.js';

const execFileP = promisify(execFile);

/** Output of a finished command. */
export interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `cmd args` to its end (at most `timeoutMs`); never throws for a non-zero exit. */
export const run = async (
  cmd: string,
  args: readonly string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<Ran> => {
  try {
    const r = await execFileP(cmd, [...args], {
      cwd: opts.cwd ?? ROOT,
      // no env: the test process's own (docker and compose find their socket and config)
      ...(opts.env ? { env: opts.env } : {}),
      timeout: opts.timeoutMs ?? 120_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: unknown; stdout?: string; stderr?: string; message: string };
    return {
      code: typeof e.code === 'number' ? e.code : -1,
      stdout: e.stdout ?? '',
      stderr: `${e.stderr ?? ''}${typeof e.code === 'number' ? '' : e.message}`,
    };
  }
};

/** Runs `cmd args` and returns its stdout; throws with its output when it exits non-zero. */
export const must = async (
  cmd: string,
  args: readonly string[],
  opts: Parameters<typeof run>[2] = {},
): Promise<string> => {
  const r = await run(cmd, args, opts);
  if (r.code !== 0)
    throw new Error(`${cmd} ${args.join(' ')} exited ${r.code}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
};

/** `docker ...`'s stdout, trimmed; throws on failure. */
export const docker = async (...args: string[]): Promise<string> =>
  (await must('docker', args)).trim();

/** A container's health check state (`starting`, `healthy`, `unhealthy`) with its last output. */
export const health = async (container: string): Promise<string> =>
  docker('inspect', '-f', '{{.State.Health.Status}}', container);

/** The base images scripts/base-images.sh makes; a missing one fails the test with the fix. */
export const requireBaseImages = async (): Promise<void> => {
  for (const image of [
    'local/trellis-node:20',
    'local/trellis-node:20-npm',
    'local/trellis-host:20',
    'local/trellis-postgres:15',
  ]) {
    const r = await run('docker', ['image', 'inspect', image]);
    if (r.code !== 0)
      throw new Error(
        `image ${image} is missing: run \`bash scripts/base-images.sh\` (setup.sh does)`,
      );
  }
};

/**
 * Runs `fn` while holding a lock shared by the test files of this checkout (they run in
 * parallel processes and write the same dist/ folder): a folder that only one can create; a
 * lock left by a process that is gone is taken over.
 */
const withLock = async <T>(fn: () => Promise<T>): Promise<T> => {
  const lock = join(ROOT, 'dist', '.e2e-package.lock');
  mkdirSync(dirname(lock), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      break;
    } catch {
      if (!holderAlive(lock)) rmSync(lock, { recursive: true, force: true });
      else await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
};

const holderAlive = (lock: string): boolean => {
  try {
    process.kill(Number(readFileSync(join(lock, 'pid'), 'utf8')), 0);
    return true;
  } catch (err) {
    // no pid file yet: its holder is between mkdir and write
    return (
      (err as NodeJS.ErrnoException).code === 'ENOENT' ||
      (err as NodeJS.ErrnoException).code === 'EPERM'
    );
  }
};

let tarball: Promise<string> | undefined;

/**
 * The packed tarball, made once per test process by `node scripts/package.mjs` (which builds
 * only what is stale and prints the tarball's path last), copied to a folder of this process
 * (another test file may pack dist/ again meanwhile).
 */
export const packedTarball = (): Promise<string> =>
  (tarball ??= withLock(async () => {
    const out = await must(process.execPath, [join(ROOT, 'scripts', 'package.mjs')], {
      timeoutMs: 300_000,
    });
    const packed = out.trim().split('\n').at(-1) ?? '';
    const copy = join(mkdtempSync(join(tmpdir(), 'trellis-e2e-tgz-')), basename(packed));
    copyFileSync(packed, copy);
    return copy;
  }));

let image: Promise<string> | undefined;

/**
 * deploy/Dockerfile built on the local base, tagged by a hash of its inputs (the tarball, the
 * Dockerfile, the health check, the base images' ids): built only when one of them changed.
 */
export const trellisImage = (): Promise<string> =>
  (image ??= (async () => {
    const tgz = await packedTarball();
    return withLock(async () => {
      const hash = createHash('sha256');
      // the tarball the build copies: dist/'s, complete while this process holds the lock
      const packed = join('dist', basename(tgz));
      for (const f of [packed, 'deploy/Dockerfile', 'deploy/healthcheck.mjs', '.dockerignore'])
        hash.update(readFileSync(join(ROOT, f)));
      hash.update(await docker('image', 'inspect', '-f', '{{.Id}}', 'local/trellis-node:20'));
      hash.update(await docker('image', 'inspect', '-f', '{{.Id}}', 'local/trellis-node:20-npm'));
      const tag = `trellis-e2e:${hash.digest('hex').slice(0, 16)}`;
      if ((await run('docker', ['image', 'inspect', tag])).code !== 0)
        await must('docker', ['build', '-q', '-f', 'deploy/Dockerfile', '-t', tag, '.'], {
          timeoutMs: 300_000,
        });
      return tag;
    });
  })());

/** The compose command: the `docker compose` plugin when present, else `docker-compose`. */
export const composeCommand = async (): Promise<readonly string[]> => {
  if ((await run('docker', ['compose', 'version'])).code === 0) return ['docker', 'compose'];
  if ((await run('docker-compose', ['version'])).code === 0) return ['docker-compose'];
  throw new Error(
    'neither `docker compose` nor `docker-compose` works: setup.sh installs docker-compose',
  );
};

/** Polls `probe` every 250 ms until it returns a value, at most `attempts` times. */
export const until = async <T>(
  what: string,
  probe: () => Promise<T | undefined>,
  context: () => Promise<string>,
  attempts = 360,
): Promise<T> => {
  for (let i = 0; i < attempts; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what} did not happen:\n${await context()}`);
};
