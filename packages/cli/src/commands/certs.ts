import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { systemClock } from '@trellis/core';
import { ExitCode, type CliIo } from '../io.js';
import type { Command } from './command.js';
import { parseCommandArgs } from './common.js';
import type { FlagSpecs } from './flags.js';

const USAGE = 'trellis certs --out <dir> [--host <name,...>] [--worker <id,...>] [--days N]';

const OPTIONS = {
  out: {
    type: 'string',
    value: '<dir>',
    description: 'folder of the CA and the certificates (the CA there is reused, else made)',
    example: 'trellis certs --out ./tls --host coord.internal,10.0.0.5 --worker gpu-1,gpu-2',
  },
  host: {
    type: 'string',
    value: '<name,...>',
    description:
      'makes coordinator.pem for these DNS names and IP addresses (the ones workers dial)',
    example: 'trellis certs --out ./tls --host coord.internal',
  },
  worker: {
    type: 'string',
    value: '<id,...>',
    description: 'makes worker-<id>.pem, a client certificate per worker (mutual TLS)',
    example: 'trellis certs --out ./tls --worker gpu-1',
  },
  days: {
    type: 'string',
    value: '<n>',
    description: 'validity of new certificates in days (default 825; the CA: 3650)',
    example: 'trellis certs --out ./tls --host coord.internal --days 365',
  },
} as const satisfies FlagSpecs;

const list = (v: string | undefined): string[] =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

/** Writes a PEM pair; refuses to overwrite (a key in use is never replaced by accident). */
const writePair = (dir: string, base: string, p: { cert: string; key: string }): string[] => {
  const cert = join(dir, `${base}.pem`);
  const key = join(dir, `${base}-key.pem`);
  for (const f of [cert, key])
    if (existsSync(f))
      throw new Error(`${f} exists: remove it to make a new one, or choose another --out`);
  writeFileSync(cert, p.cert, { mode: 0o644 });
  writeFileSync(key, p.key, { mode: 0o600 });
  return [cert, key];
};

/**
 * `trellis certs`: a CA of the fleet, the coordinator's server certificate and one client
 * certificate per worker, each with its own key (docs/security.md). Keys are written 0600.
 */
const run = async (args: readonly string[], io: CliIo): Promise<ExitCode> => {
  const { values, positionals } = parseCommandArgs(args, OPTIONS);
  const hosts = list(values.host);
  const workers = list(values.worker);
  const days = values.days === undefined ? 825 : Number(values.days);
  const problem =
    positionals.length > 0
      ? `unexpected argument ${JSON.stringify(positionals[0])}`
      : values.out === undefined
        ? 'name the folder with --out'
        : hosts.length === 0 && workers.length === 0
          ? 'name the coordinator (--host) or workers (--worker) to make certificates for'
          : !(Number.isInteger(days) && days >= 1)
            ? `invalid --days ${JSON.stringify(values.days)}: use a whole number of days, 1 or more`
            : workers.find((w) => !/^[A-Za-z0-9._@-]+$/.test(w)) !== undefined
              ? `invalid --worker id in ${JSON.stringify(values.worker)}: use letters, digits, . _ @ -`
              : undefined;
  if (problem !== undefined || values.out === undefined) {
    io.err(`trellis certs: ${problem ?? 'name the folder with --out'}\nusage: ${USAGE}`);
    return ExitCode.Usage;
  }
  const { makeCa, makeLeaf } = await import('@trellis/coordinator');
  const dir = resolve(io.cwd, values.out);
  const now = systemClock.now();
  try {
    mkdirSync(dir, { recursive: true });
    const caCert = join(dir, 'ca.pem');
    const caKey = join(dir, 'ca-key.pem');
    let ca: { cert: string; key: string };
    if (existsSync(caCert) && existsSync(caKey)) {
      ca = { cert: readFileSync(caCert, 'utf8'), key: readFileSync(caKey, 'utf8') };
      io.out(`using the CA in ${caCert}`);
    } else {
      ca = await makeCa('Trellis fleet CA', 3650, now);
      io.out(`wrote ${writePair(dir, 'ca', ca).join(', ')} (keep ca-key.pem off the fleet)`);
    }
    if (hosts.length > 0) {
      const leaf = { commonName: hosts[0] ?? '', use: 'server', hosts, days } as const;
      const files = writePair(dir, 'coordinator', await makeLeaf(ca, leaf, now));
      io.out(`wrote ${files.join(', ')} (for the coordinator only)`);
    }
    for (const id of workers) {
      const leaf = { commonName: id, use: 'client', hosts: [], days } as const;
      const files = writePair(dir, `worker-${id}`, await makeLeaf(ca, leaf, now));
      io.out(`wrote ${files.join(', ')} (for worker ${id} only)`);
    }
  } catch (e) {
    io.err(`trellis certs: ${(e as Error).message}`);
    return ExitCode.Failure;
  }
  return ExitCode.Ok;
};

export const certsCommand: Command = {
  name: 'certs',
  summary: 'make a CA, the coordinator certificate and worker client certificates',
  usage: USAGE,
  options: OPTIONS,
  run,
};
