import http from 'node:http';

/** One Server-Sent Event as received (comments are counted apart). */
export interface SseEvent {
  readonly id?: string;
  readonly event: string;
  readonly data: string;
}

/** A Server-Sent Events connection: events as they come, and waiting for some. */
export interface SseClient {
  readonly status: number;
  readonly events: SseEvent[];
  /** Comment lines received (heartbeats). */
  readonly comments: string[];
  /** Resolves with the first event (from the start) that matches, waiting for it if needed. */
  next(match: (e: SseEvent) => boolean): Promise<SseEvent>;
  /** Resolves once `n` events arrived. */
  count(n: number): Promise<SseEvent[]>;
  /** Resolves once a comment line arrived. */
  comment(): Promise<string>;
  /** Resolves when the server ended the stream. */
  readonly ended: Promise<void>;
  close(): void;
}

/** Parses `text/event-stream` blocks (fields id, event, data; `:` comments). */
const parseBlock = (block: string): SseEvent | { comment: string } => {
  let id: string | undefined;
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) return { comment: line.slice(1).trim() };
    const i = line.indexOf(':');
    const field = i === -1 ? line : line.slice(0, i);
    const value = i === -1 ? '' : line.slice(i + 1).replace(/^ /, '');
    if (field === 'id') id = value;
    else if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  return { ...(id !== undefined ? { id } : {}), event, data: data.join('\n') };
};

/** Opens `url` as an event stream (headers such as Last-Event-ID may be given). */
export const openSse = (url: string, headers: Record<string, string> = {}): Promise<SseClient> =>
  new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      const events: SseEvent[] = [];
      const comments: string[] = [];
      const wake = new Set<() => void>();
      let buffer = '';
      let endedResolve: () => void = () => undefined;
      const ended = new Promise<void>((r) => (endedResolve = r));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let cut = buffer.indexOf('\n\n');
        while (cut !== -1) {
          const parsed = parseBlock(buffer.slice(0, cut));
          buffer = buffer.slice(cut + 2);
          if ('comment' in parsed) comments.push(parsed.comment);
          else events.push(parsed);
          cut = buffer.indexOf('\n\n');
        }
        for (const w of [...wake]) w();
      });
      res.on('close', () => {
        endedResolve();
        for (const w of [...wake]) w();
      });
      const until = <T>(get: () => T | undefined): Promise<T> =>
        new Promise((ok) => {
          const check = (): void => {
            const v = get();
            if (v === undefined) return;
            wake.delete(check);
            ok(v);
          };
          wake.add(check);
          check();
        });
      resolve({
        status: res.statusCode ?? 0,
        events,
        comments,
        next: (match) => until(() => events.find(match)),
        count: (n) => until(() => (events.length >= n ? events.slice(0, n) : undefined)),
        comment: () => until(() => comments[0]),
        ended,
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
  });
