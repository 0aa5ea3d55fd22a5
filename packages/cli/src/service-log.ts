import { hostname } from 'node:os';
import type { CliIo } from './io.js';

/*
 * The log of the long-running commands (server, start-all, scheduler, coordinator, worker): one
 * line per event whatever the message holds (a stack trace or a multi-line error becomes one
 * line, its frames left out), and with `--log-format json` (or SVC_LOG_FORMAT=json) one JSON
 * object per line with the same fields everywhere: time, level, component, host, pid, msg.
 */

/** The commands whose output is a service log. */
export const SERVICE_COMMANDS: ReadonlySet<string> = new Set([
  'server',
  'start-all',
  'scheduler',
  'coordinator',
  'worker',
]);

type LogFormat = 'text' | 'json';
type Level = 'info' | 'warn' | 'error';

const FORMATS: readonly LogFormat[] = ['text', 'json'];

/**
 * Takes `--log-format <f>` / `--log-format=<f>` out of a command's words (before `--`); the
 * format is the flag's, else SVC_LOG_FORMAT's, else text.
 * @returns the remaining words and the format, or an error naming the value and the fix.
 */
export const takeLogFormat = (
  rest: readonly string[],
  env: CliIo['env'],
): { rest: string[]; format: LogFormat } | { error: string } => {
  const words = [...rest];
  const end = words.indexOf('--') === -1 ? words.length : words.indexOf('--');
  let given: string | undefined;
  let from = 'SVC_LOG_FORMAT';
  for (let i = 0; i < end; i++) {
    const w = words[i] ?? '';
    if (w === '--log-format' || w.startsWith('--log-format=')) {
      const inline = w.startsWith('--log-format=');
      given = inline ? w.slice('--log-format='.length) : (words[i + 1] ?? '');
      words.splice(i, inline ? 1 : 2);
      from = '--log-format';
      break;
    }
  }
  const value = given ?? (env.SVC_LOG_FORMAT || 'text');
  if (!(FORMATS as readonly string[]).includes(value))
    return { error: `invalid ${from} ${JSON.stringify(value)}: use text or json` };
  return { rest: words, format: value as LogFormat };
};

const STACK_FRAME = /^\s+at\s|^\s*\^+\s*$|^Node\.js v\d/;

/** One line: the message's lines without stack frames, joined with " | ". */
const oneLine = (text: string): string =>
  text
    .split(/\r?\n/)
    .filter((l) => l.trim() !== '' && !STACK_FRAME.test(l))
    .map((l) => l.trim())
    .join(' | ');

/** The level a line says it has ("warning: ...", "error: ...", "trellis x: <fatal>"). */
const levelOf = (msg: string, stream: 'out' | 'err'): { level: Level; msg: string } => {
  // "warning: x", or a worker's "worker <id>: warning: x" (the id prefix stays)
  const m = /^((?:worker \S+: )?)(warning|warn|error):\s*/i.exec(msg);
  if (m?.[2]) {
    const level = m[2].toLowerCase().startsWith('warn') ? 'warn' : 'error';
    return { level, msg: `${m[1] ?? ''}${msg.slice(m[0].length)}` };
  }
  if (stream === 'err' && /^trellis( [a-z-]+)?: /.test(msg)) return { level: 'error', msg };
  return { level: 'info', msg };
};

/**
 * The io of a service command: each line it writes becomes one log record in `format`.
 * `now` is for tests.
 */
export const serviceIo = (
  io: CliIo,
  component: string,
  format: LogFormat,
  now: () => Date = () => new Date(),
): CliIo => {
  const host = hostname();
  const record = (stream: 'out' | 'err', text: string): string => {
    const { level, msg } = levelOf(oneLine(text), stream);
    if (format === 'text') return oneLine(text);
    return JSON.stringify({
      time: now().toISOString(),
      level,
      component,
      host,
      pid: process.pid,
      msg,
    });
  };
  return {
    ...io,
    out: (line) => io.out(record('out', line)),
    err: (line) => io.err(record('err', line)),
  };
};
