import { describe, expect, it } from 'vitest';
import { SseParser } from './sse-parser';

describe('SseParser', () => {
  it('splits events across chunks of any size, joins data lines and skips comments', () => {
    const text =
      ': hello\n\nevent: run:started\nid: 7\ndata: {"a":\ndata: 1}\n\nevent: run:finished\r\ndata: x\r\n\r\n';
    const p = new SseParser();
    const events = [...text].flatMap((c) => p.push(c));
    expect(events).toEqual([
      { event: 'run:started', id: '7', data: '{"a":\n1}' },
      { event: 'run:finished', id: '7', data: 'x' },
    ]);
  });

  it('names an event without an event field "message"', () => {
    expect(new SseParser().push('data: hi\n\n')).toEqual([{ event: 'message', data: 'hi' }]);
  });
});
