import { ExitCode, type CliIo } from '../io.js';
import { ApiClient, ApiError } from '../runs/api-client.js';
import type { Command } from './command.js';
import { parseCommandArgs } from './common.js';
import type { FlagSpecs } from './flags.js';

const OPTIONS = {
  server: {
    type: 'string',
    value: '<url>',
    description:
      'the Trellis server whose coordinator the worker is connected to (http://host:port)',
    example: 'trellis worker cordon gpu-1 --server http://trellis.internal:8080',
  },
  token: {
    type: 'string',
    value: '<token>',
    description: 'an admin Bearer token for --server (default $SVC_API_TOKEN)',
    example: 'trellis worker drain gpu-1 --server http://127.0.0.1:8080 --token "$ADMIN_TOKEN"',
  },
} as const satisfies FlagSpecs;

type Action = 'cordon' | 'uncordon' | 'drain';

const SUMMARY: Readonly<Record<Action, string>> = {
  cordon: 'stop new runs reaching a worker (running ones go on)',
  uncordon: 'let a cordoned worker take runs again',
  drain: 'stop new runs reaching a worker, let its runs finish, then it exits',
};

/** `trellis worker cordon|uncordon|drain <id> --server <url>`: POST /api/v2/workers/{id}/<action>. */
const adminCommand = (action: Action): Command => {
  const usage = `trellis worker ${action} <id> --server <url> [--token <token>]`;
  const run = async (args: readonly string[], io: CliIo): Promise<ExitCode> => {
    const { values, positionals } = parseCommandArgs(args, OPTIONS);
    const id = positionals[0];
    const problem =
      id === undefined || positionals.length > 1
        ? 'name one worker id (see GET /api/v2/workers)'
        : values.server === undefined
          ? 'name the server with --server <url> (the API of any coordinator)'
          : undefined;
    if (problem !== undefined || id === undefined || values.server === undefined) {
      io.err(`trellis worker ${action}: ${problem ?? 'missing argument'}\nusage: ${usage}`);
      return ExitCode.Usage;
    }
    try {
      const client = new ApiClient(values.server, values.token ?? io.env.SVC_API_TOKEN);
      const w = await client.call(
        'POST',
        `/workers/${encodeURIComponent(id)}/${action}`,
        // the wire schemas (zod) load here, not with `trellis --help`
        { schema: (await import('../runs/wire-schemas.js')).WorkerSchema },
        {},
      );
      io.out(
        `worker ${w.id} is ${w.state ?? action} (${w.slots_busy ?? 0}/${w.slots_total ?? 0} slots busy)`,
      );
      return ExitCode.Ok;
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      io.err(`trellis worker ${action}: ${e.message}`);
      return e.exitCode;
    }
  };
  return { name: `worker ${action}`, summary: SUMMARY[action], usage, options: OPTIONS, run };
};

const ADMIN: Readonly<Record<string, Command>> = {
  cordon: adminCommand('cordon'),
  uncordon: adminCommand('uncordon'),
  drain: adminCommand('drain'),
};

/** `trellis worker <action> ...` when the first argument names one, else undefined. */
export const workerAdminOf = (args: readonly string[]): Command | undefined =>
  args[0] !== undefined && Object.hasOwn(ADMIN, args[0]) ? ADMIN[args[0]] : undefined;

/** For `trellis worker --help`. */
export const WORKER_ADMIN_HELP = (['cordon', 'uncordon', 'drain'] as const)
  .map((a) => `  trellis worker ${a} <id> --server <url> [--token <t>]: ${SUMMARY[a]}`)
  .join('\n');
