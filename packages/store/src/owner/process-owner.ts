import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { RunOwner } from '@trellis/spec';

/**
 * Clock ticks per second of `/proc/<pid>/stat` start times (`USER_HZ`). Linux fixes it at 100 on
 * every architecture Node supports; `getconf CLK_TCK` would need a child process.
 */
const TICKS_PER_SECOND = 100;

/**
 * How far two readings of one process's start time may differ and still name the same process,
 * in ms. Boot time (`btime`) is derived from the wall clock, so two processes can read values a
 * second apart after a clock adjustment; a pid reused within this window is not told apart.
 */
export const PROCESS_START_TOLERANCE_MS = 2000;

/**
 * The state letter and start time (field 22, in clock ticks after boot) from the text of
 * `/proc/<pid>/stat`. The command name (field 2) may hold spaces and parentheses, so fields are
 * counted after its last `)`.
 */
export const parseProcStat = (text: string): { state: string; startTicks: number } | undefined => {
  const close = text.lastIndexOf(')');
  if (close === -1) return undefined;
  // After ")": field 3 (state) is at index 0, so field 22 is at index 19.
  const fields = text
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  const state = fields[0];
  const startTicks = Number(fields[19]);
  if (state === undefined || !Number.isSafeInteger(startTicks)) return undefined;
  return { state, startTicks };
};

/** Boot time in Unix seconds from the text of `/proc/stat` (its `btime` line). */
export const parseBootTime = (text: string): number | undefined => {
  const m = /^btime\s+(\d+)$/m.exec(text);
  return m?.[1] === undefined ? undefined : Number(m[1]);
};

const readText = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

/**
 * When process `pid` started, as ISO 8601 UTC (10 ms resolution), from `/proc/<pid>/stat` and the
 * boot time in `/proc/stat`. Undefined when no such process runs (a zombie counts as ended) or
 * `/proc` is not available (not Linux).
 */
export const processStartTime = (pid: number): string | undefined => {
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
  const stat = readText(`/proc/${pid}/stat`);
  const parsed = stat === undefined ? undefined : parseProcStat(stat);
  if (parsed === undefined || parsed.state === 'Z' || parsed.state === 'X') return undefined;
  const procStat = readText('/proc/stat');
  const bootSec = procStat === undefined ? undefined : parseBootTime(procStat);
  if (bootSec === undefined) return undefined;
  return new Date(bootSec * 1000 + (parsed.startTicks * 1000) / TICKS_PER_SECOND).toISOString();
};

let ownStart: string | undefined;

/**
 * The owner record for runs this process executes: pid, host name, its own start time (`''` where
 * `/proc` is not available) and `workerId`. @default workerId `local`
 */
export const currentOwner = (workerId = 'local'): RunOwner => {
  ownStart ??= processStartTime(process.pid) ?? '';
  return { pid: process.pid, host: hostname(), processStart: ownStart, workerId };
};

/** True when a signal can be delivered to `pid` (it exists; EPERM means it exists too). */
export const pidExists = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: unknown }).code === 'EPERM';
  }
};

/**
 * True when the process that owns a run still runs: same host, the pid is running, and it
 * started when the owner says (so a reused pid is not mistaken for the owner). An owner recorded
 * without a start time (no `/proc` where it ran) is judged by the pid alone. An owner on another
 * host is never alive from here: callers decide whether they may judge such runs.
 */
export const isOwnerAlive = (owner: RunOwner): boolean => {
  if (owner.host !== hostname()) return false;
  if (owner.processStart === '') return pidExists(owner.pid);
  const started = processStartTime(owner.pid);
  if (started === undefined) return false;
  const diff = Math.abs(Date.parse(started) - Date.parse(owner.processStart));
  return diff <= PROCESS_START_TOLERANCE_MS;
};
