import type { ApiRunDetails } from '@trellis/contract';
import { ExitCode, type CliIo } from '../io.js';
import { ApiClient, ApiError } from '../runs/api-client.js';
import { nodesOf } from '../runs/follow-logs.js';
import { exitCodeFor, outputOf } from '../runs/report.js';
import { localRunSource, remoteRunSource, type RunSource } from '../runs/run-source.js';
import { dagAndChoiceOf, SERVER_OPTIONS } from './client-flags.js';
import type { Command } from './command.js';
import { dagNameOf, parseCommandArgs, withRuntime } from './common.js';
import { RUN_ID_OPTION } from './run-flags.js';

const USAGE = 'trellis status <dag> [--run-id <id>] [--server <url> [--token <t>]] [--json]';

const OPTIONS = { ...RUN_ID_OPTION, ...SERVER_OPTIONS } as const;

const seconds = (from: string, to: string): string =>
  from && to ? `${((Date.parse(to) - Date.parse(from)) / 1000).toFixed(1)}s` : '-';

/** `params` (JSON object text) as `NAME=value` words. */
const paramWords = (params: string): string => {
  try {
    const words = Object.entries(JSON.parse(params) as Record<string, unknown>).map(
      ([k, v]) => `${k}=${String(v)}`,
    );
    return words.length > 0 ? words.join(' ') : '-';
  } catch {
    return params || '-';
  }
};

/** A run as a small table: the run, then one row per step (and handler). */
export const formatStatus = (r: ApiRunDetails): string => {
  const rows = nodesOf(r).map((n) => [
    n.step.name,
    n.statusLabel,
    n.startedAt || '-',
    seconds(n.startedAt, n.finishedAt),
    String(n.retryCount),
    String(n.doneCount),
    n.error || '',
  ]);
  const head = ['STEP', 'STATUS', 'STARTED', 'TOOK', 'RETRIES', 'DONE', 'ERROR'];
  const widths = head.map((h, i) =>
    Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)),
  );
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [
    `DAG       ${r.name}`,
    `run       ${r.dagRunId} (${r.statusLabel})`,
    `started   ${r.startedAt || '-'}`,
    `finished  ${r.finishedAt || '-'} (took ${seconds(r.startedAt, r.finishedAt)})`,
    `params    ${paramWords(r.params)}`,
    ...(r.error ? [`error     ${r.error}`] : []),
    `log       ${r.log}`,
    '',
    line(head),
    ...rows.map(line),
  ].join('\n');
};

/** Prints the run as a table or JSON; the exit code tells its result. */
const show = async (
  io: CliIo,
  json: boolean,
  source: RunSource,
  ref: { name: string; dagRunId: string },
): Promise<ExitCode> => {
  const d = await source.details(ref);
  if (json) outputOf(io, true).json(d);
  else io.out(formatStatus(d));
  return exitCodeFor(d.status);
};

/**
 * `trellis status`: the latest run of a DAG (or one run) as a table, or as the API's JSON; from
 * the local store or from `--server`. Exit 0 for a finished or unfinished run, 1 failed or
 * partial success, 3 cancelled.
 */
const run = async (args: readonly string[], io: CliIo): Promise<ExitCode> => {
  const { values, positionals } = parseCommandArgs(args, OPTIONS);
  const named = dagAndChoiceOf('status', USAGE, positionals, values, io);
  if (!named) return ExitCode.Usage;
  const { dag, choice } = named;
  const dagRunId = values['run-id'] ?? 'latest';
  if (choice.server === undefined)
    return withRuntime('status', io, values, (rt) =>
      show(io, choice.json, localRunSource(rt), { name: dagNameOf(rt, dag, io.cwd), dagRunId }),
    );
  try {
    const client = new ApiClient(choice.server, choice.token);
    return await show(io, choice.json, remoteRunSource(client), { name: dag, dagRunId });
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    io.err(`trellis status: ${e.message}`);
    return e.exitCode;
  }
};

export const statusCommand: Command = {
  name: 'status',
  summary: "show a run's status and steps",
  usage: USAGE,
  details: [
    'Exit codes: 0 the run finished or has not ended yet, 1 it failed or partially succeeded',
    '(or there is no such run), 2 usage, 3 it was cancelled, 5 the server could not be used.',
  ].join('\n'),
  options: OPTIONS,
  run,
};
