import { nodeStatusLabel, runStatusLabel } from '@trellis/core';
import type { DagRunRecord, NodeRecord } from '@trellis/spec';
import { ExitCode, type CliIo } from '../io.js';
import type { Command } from './command.js';
import { parseCommandArgs, withRuntime, dagNameOf } from './common.js';

const USAGE = 'trellis status <dag> [--run-id <id>] [--json]';

const seconds = (from: string, to: string): string =>
  from && to ? `${((Date.parse(to) - Date.parse(from)) / 1000).toFixed(1)}s` : '-';

/** A run as a small table: the run, then one row per step (and handler). */
export const formatStatus = (r: DagRunRecord): string => {
  const nodes = [
    ...r.nodes,
    ...[r.onSuccess, r.onFailure, r.onCancel, r.onExit].filter(
      (n): n is NodeRecord => n !== undefined,
    ),
  ];
  const rows = nodes.map((n) => [
    n.step.name,
    nodeStatusLabel[n.status],
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
    `run       ${r.dagRunId} (${runStatusLabel[r.status]})`,
    `started   ${r.startedAt || '-'}`,
    `finished  ${r.finishedAt || '-'} (took ${seconds(r.startedAt, r.finishedAt)})`,
    `params    ${r.params.length > 0 ? r.params.map((p) => `${p.name}=${p.value}`).join(' ') : '-'}`,
    ...(r.error ? [`error     ${r.error}`] : []),
    `log       ${r.log}`,
    '',
    line(head),
    ...rows.map(line),
  ].join('\n');
};

/** `trellis status`: the latest run of a DAG (or one run) as a table, or the record as JSON. */
const run = async (args: readonly string[], io: CliIo): Promise<ExitCode> => {
  const { values, positionals } = parseCommandArgs(args, {
    'run-id': { type: 'string', short: 'r' },
    json: { type: 'boolean' },
  });
  if (values.help) {
    io.out(`usage: ${USAGE}`);
    return ExitCode.Ok;
  }
  const dag = positionals[0];
  if (!dag) {
    io.err(`trellis status: name one DAG\nusage: ${USAGE}`);
    return ExitCode.Usage;
  }
  return withRuntime('status', io, values, async (rt) => {
    const name = dagNameOf(rt, dag, io.cwd);
    const record = await rt.runs.status(name, values['run-id']);
    io.out(values.json ? JSON.stringify(record, null, 2) : formatStatus(record));
    return ExitCode.Ok;
  });
};

export const statusCommand: Command = {
  name: 'status',
  summary: "show a run's status and steps",
  usage: USAGE,
  run,
};
