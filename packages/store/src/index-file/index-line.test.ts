import { describe, expect, it } from 'vitest';
import { makeRecord } from '@trellis/testkit';
import { toRunSummary } from '../runs/run-summary.js';
import { decodeIndexLine, encodeIndexLine, keyOfSummary } from './index-line.js';

const summary = toRunSummary(makeRecord({ name: 'etl', dagRunId: 'r1' }));

describe('index lines', () => {
  it('round-trips a summary and a removal', () => {
    const put = encodeIndexLine({ kind: 'put', key: 'r1', summary });
    expect(put.endsWith('\n')).toBe(true);
    expect(decodeIndexLine(put.slice(0, -1))).toEqual({ kind: 'put', key: 'r1', summary });
    expect(decodeIndexLine(encodeIndexLine({ kind: 'del', key: 'r1' }).trim())).toEqual({
      kind: 'del',
      key: 'r1',
    });
  });

  it('keys a child run by its root id and its own id', () => {
    const child = toRunSummary(
      makeRecord({
        name: 'sub',
        dagRunId: 'c1',
        root: { name: 'etl', dagRunId: 'r1' },
        parent: { name: 'etl', dagRunId: 'r1' },
      }),
    );
    expect(keyOfSummary(child)).toBe('r1/c1');
  });

  it('salvages the line appended after a torn fragment', () => {
    const torn = encodeIndexLine({ kind: 'put', key: 'r0', summary }).slice(0, 25);
    const next = encodeIndexLine({ kind: 'put', key: 'r1', summary }).trim();
    expect(decodeIndexLine(torn + next)).toEqual({ kind: 'put', key: 'r1', summary });
  });

  it('reads nothing from garbage, an empty line or a JSON value of another shape', () => {
    expect(decodeIndexLine('not json')).toBeUndefined();
    expect(decodeIndexLine('')).toBeUndefined();
    expect(decodeIndexLine('{"put":{"name":1}}')).toBeUndefined();
  });

  it('tolerates a CRLF line ending', () => {
    expect(decodeIndexLine('{"del":"r9"}\r')).toEqual({ kind: 'del', key: 'r9' });
  });
});
