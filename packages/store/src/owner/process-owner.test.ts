import { describe, expect, it } from 'vitest';
import { parseBootTime, parseProcStat } from './process-owner.js';

// A real line from /proc/<pid>/stat, with a command name that holds spaces and parentheses.
const STAT =
  '23296 (my (odd) cmd) S 23292 23292 21501 0 -1 4194304 99 0 0 0 0 0 0 0 20 0 1 0 178415 2998272 394';

describe('parseProcStat', () => {
  it('reads the state and the start time (field 22) after the command name', () => {
    expect(parseProcStat(STAT)).toEqual({ state: 'S', startTicks: 178415 });
  });

  it('reads nothing from text that is not a stat line', () => {
    expect(parseProcStat('garbage')).toBeUndefined();
    expect(parseProcStat('1 (x) S 1 2')).toBeUndefined();
  });
});

describe('parseBootTime', () => {
  it('reads the btime line of /proc/stat', () => {
    expect(parseBootTime('cpu 1 2 3\nbtime 1795332345\nprocesses 9\n')).toBe(1795332345);
  });

  it('reads nothing when the line is missing', () => {
    expect(parseBootTime('cpu 1 2 3\n')).toBeUndefined();
  });
});
