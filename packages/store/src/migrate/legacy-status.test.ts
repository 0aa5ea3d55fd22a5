import { describe, expect, it } from 'vitest';
import { dagNameOfLegacyFile } from './legacy-layout.js';
import { parseLegacyStatus, toIsoTime } from './legacy-status.js';

describe('legacy 1.16 status lines', () => {
  it('reads the last non-empty line, keys in any letter case', () => {
    const text = [
      JSON.stringify({ RequestId: 'r1', Name: 'etl', Status: 1 }),
      JSON.stringify({
        requestId: 'r1',
        NAME: 'etl',
        Status: 4,
        Nodes: [
          {
            Step: { Name: 'a' },
            Log: '/l/a.log',
            Status: 4,
            RetryCount: 1,
            OutputVariables: { OUT: 'OUT=42' },
          },
        ],
        OnExit: { Step: { Name: 'onExit' }, Status: 4 },
        ParamsList: ['A=1'],
      }),
      '',
    ].join('\n');
    const s = parseLegacyStatus(text);
    expect(s).toMatchObject({
      requestId: 'r1',
      name: 'etl',
      status: 4,
      paramsList: ['A=1'],
      nodes: [{ log: '/l/a.log', status: 4, retryCount: 1, outputs: { OUT: '42' } }],
      onExit: { status: 4 },
    });
  });

  it.each([
    ['', 'the file is empty'],
    ['{"RequestId":"r1"', 'its last line is not JSON'],
    ['[1,2]', 'its last line is not a JSON object'],
  ])('reports a corrupt file %j', (text, problem) => {
    expect(parseLegacyStatus(text)).toEqual({
      problem: expect.stringContaining(problem) as string,
    });
  });

  it('converts timestamps to ISO UTC; empty, "-" and the zero time are none', () => {
    expect(toIsoTime('2024-01-02T03:04:05+02:00')).toBe('2024-01-02T01:04:05.000Z');
    expect(toIsoTime('2024-01-02T03:04:05.25Z')).toBe('2024-01-02T03:04:05.250Z');
    expect(toIsoTime('2024-01-02 03:04:05')).toBe(new Date(2024, 0, 2, 3, 4, 5).toISOString());
    expect(toIsoTime('')).toBe('');
    expect(toIsoTime('-')).toBe('');
    expect(toIsoTime('0001-01-01T00:00:00Z')).toBe('');
    expect(toIsoTime('yesterday')).toBeUndefined();
  });

  it('takes the DAG name from a file name, dots included', () => {
    expect(dagNameOfLegacyFile('etl.20240101.12:00:00.000Z.abcd1234.dat')).toBe('etl');
    expect(dagNameOfLegacyFile('my.dag.20240101.120000.000.abcd1234.dat')).toBe('my.dag');
    expect(dagNameOfLegacyFile('notes.txt')).toBeUndefined();
  });
});
