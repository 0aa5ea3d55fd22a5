import { describe, expect, it } from 'vitest';
import type { CliIo } from './io.js';
import { serviceIo, takeLogFormat } from './service-log.js';

const capture = () => {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (l) => out.push(l), err: (l) => err.push(l), env: {}, cwd: '/' };
  return { io, out, err };
};

const at = () => new Date('2026-01-02T03:04:05.000Z');

describe('takeLogFormat', () => {
  it('takes the flag out of the words, before --, and falls back to SVC_LOG_FORMAT, then text', () => {
    expect(takeLogFormat(['--log-format', 'json', '--id', 'w'], {})).toEqual({
      rest: ['--id', 'w'],
      format: 'json',
    });
    expect(takeLogFormat(['--log-format=text'], { SVC_LOG_FORMAT: 'json' })).toEqual({
      rest: [],
      format: 'text',
    });
    expect(takeLogFormat(['a'], { SVC_LOG_FORMAT: 'json' })).toEqual({
      rest: ['a'],
      format: 'json',
    });
    expect(takeLogFormat(['--', '--log-format', 'json'], {})).toEqual({
      rest: ['--', '--log-format', 'json'],
      format: 'text',
    });
  });

  it('names a bad value, where it came from, and the fix', () => {
    expect(takeLogFormat(['--log-format', 'xml'], {})).toEqual({
      error: 'invalid --log-format "xml": use text or json',
    });
    expect(takeLogFormat([], { SVC_LOG_FORMAT: 'yaml' })).toEqual({
      error: 'invalid SVC_LOG_FORMAT "yaml": use text or json',
    });
  });
});

describe('serviceIo', () => {
  const stack = 'error: request failed: Error: boom\n    at f (/a.js:1:2)\n    at g (/b.js:3:4)';

  it('writes one line per event in text, without stack frames', () => {
    const c = capture();
    serviceIo(c.io, 'server', 'text', at).err(stack);
    expect(c.err).toEqual(['error: request failed: Error: boom']);
  });

  it('writes JSON records with the shared fields and the level of the line', () => {
    const c = capture();
    const io = serviceIo(c.io, 'worker', 'json', at);
    io.err('worker w1: warning: redis is unreachable');
    io.err(stack);
    io.err('trellis worker: no Redis configured\nusage: trellis worker');
    io.out('Trellis worker "w1" started');
    const recs = [...c.err, ...c.out].map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(recs.map((r) => [r.level, r.msg])).toEqual([
      ['warn', 'worker w1: redis is unreachable'],
      ['error', 'request failed: Error: boom'],
      ['error', 'trellis worker: no Redis configured | usage: trellis worker'],
      ['info', 'Trellis worker "w1" started'],
    ]);
    expect(recs[0]).toMatchObject({
      time: '2026-01-02T03:04:05.000Z',
      component: 'worker',
      pid: process.pid,
    });
    expect(Object.keys(recs[0] ?? {}).sort()).toEqual([
      'component',
      'host',
      'level',
      'msg',
      'pid',
      'time',
    ]);
  });
});
