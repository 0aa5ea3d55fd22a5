import { ExitCode, type CliIo } from '../io.js';
import type { Command } from './command.js';
import { parseCommandArgs, withRuntime } from './common.js';
import type { FlagSpecs } from './flags.js';

const USAGE = 'trellis dequeue <name>:<runId>   (or --dag-run=<name>:<runId>)';

const OPTIONS = {
  'dag-run': {
    type: 'string',
    short: 'd',
    value: '<name>:<runId>',
    description: 'the queued run as <name>:<runId> (instead of the positional argument)',
    example: 'trellis dequeue --dag-run=etl:0199a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b',
  },
} as const satisfies FlagSpecs;

/** `trellis dequeue`: takes a queued run off its queue; it ends cancelled and stays in history. */
const run = async (args: readonly string[], io: CliIo): Promise<ExitCode> => {
  const { values, positionals } = parseCommandArgs(args, OPTIONS);
  const target = values['dag-run'] ?? positionals[0];
  const sep = target?.lastIndexOf(':') ?? -1;
  if (target === undefined || positionals.length > 1 || sep <= 0 || sep === target.length - 1) {
    io.err(
      `trellis dequeue: name one queued run as <name>:<runId>, e.g. etl:0199a1b2-...\nusage: ${USAGE}`,
    );
    return ExitCode.Usage;
  }
  const ref = { name: target.slice(0, sep), dagRunId: target.slice(sep + 1) };
  return withRuntime('dequeue', io, values, async (rt) => {
    await rt.runs.dequeue(ref);
    io.out(`run ${ref.dagRunId} of DAG "${ref.name}" dequeued (cancelled)`);
    return ExitCode.Ok;
  });
};

export const dequeueCommand: Command = {
  name: 'dequeue',
  summary: 'take a queued run off its queue',
  usage: USAGE,
  options: OPTIONS,
  run,
};
