import { oneOf, twoWordCommandsFor } from './commands/command-hint.js';
import { commandHelp } from './commands/help.js';
import { COMMANDS, findCommand } from './commands/registry.js';
import { ExitCode, type CliIo } from './io.js';
import { SERVICE_COMMANDS, serviceIo, takeLogFormat } from './service-log.js';

export { VERSION } from './version.js';
import { VERSION } from './version.js';

const helpText = (): string => {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  const lines = COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return [
    `trellis ${VERSION}: workflow orchestration (DAGs of steps, queues, cron, a labelled worker fleet)`,
    '',
    'usage: trellis <command> [options]',
    '',
    'commands:',
    ...lines,
    '',
    'Run `trellis <command> --help` for the options of one command.',
    'Settings come from $SVC_HOME/config.yaml, SVC_* environment variables and flags, in that order.',
  ].join('\n');
};

/** `--help` or `-h` among a command's own words (before `--`, after which params follow). */
const wantsHelp = (rest: readonly string[]): boolean => {
  const end = rest.indexOf('--');
  return (end === -1 ? rest : rest.slice(0, end)).some((w) => w === '--help' || w === '-h');
};

/** node's parseArgs messages go on with advice about `--`; the first sentence says it. */
const firstSentence = (message: string): string => message.split(/\.\s/)[0]?.trim() ?? message;

/**
 * Runs `trellis` with `args` (the words after the program name). Returns the exit code; never
 * calls `process.exit` itself, so tests can drive it in-process.
 */
export const runCli = async (args: readonly string[], io: CliIo): Promise<ExitCode> => {
  const first = args[0];
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    (first === undefined ? io.err : io.out)(helpText());
    return first === undefined ? ExitCode.Usage : ExitCode.Ok;
  }
  if (first === '--version' || first === '-v' || first === 'version') {
    io.out(VERSION);
    return ExitCode.Ok;
  }
  const found = findCommand(args);
  if (!found) {
    const meant = twoWordCommandsFor(first, COMMANDS);
    io.err(
      `trellis: unknown command ${JSON.stringify(first)}; ${meant.length > 0 ? `did you mean ${oneOf(meant)}?` : 'run `trellis --help` for the list'}`,
    );
    return ExitCode.Usage;
  }
  const { command, rest } = found;
  if (wantsHelp(rest)) {
    io.out(commandHelp(command));
    return ExitCode.Ok;
  }
  let words = rest;
  let cmdIo = io;
  if (SERVICE_COMMANDS.has(command.name)) {
    // a service log: one line per event, `--log-format json` for log shippers (service-log.ts)
    const log = takeLogFormat(rest, io.env);
    if ('error' in log) {
      io.err(`trellis ${command.name}: ${log.error}`);
      return ExitCode.Usage;
    }
    words = log.rest;
    cmdIo = serviceIo(io, command.name, log.format);
  }
  try {
    return await command.run(words, cmdIo);
  } catch (e) {
    if (e instanceof TypeError && 'code' in e && String(e.code).startsWith('ERR_PARSE_ARGS')) {
      cmdIo.err(
        `trellis ${command.name}: ${firstSentence(e.message)} (run \`trellis ${command.name} --help\` for every flag)\nusage: ${command.usage}`,
      );
      return ExitCode.Usage;
    }
    throw e;
  }
};
