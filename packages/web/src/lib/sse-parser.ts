/** One Server-Sent Event: its `event:` name (`message` when absent), `data:` text and `id:`. */
interface SseEvent {
  readonly event: string;
  readonly data: string;
  readonly id?: string;
}

/**
 * Splits a Server-Sent Events byte stream, fed as text chunks in any sizes, into events (the
 * WHATWG rules the UI needs: `event`, `data` lines joined by newlines, `id`, comments ignored).
 */
export class SseParser {
  #buffer = '';
  #event = '';
  #data: string[] = [];
  #id: string | undefined;

  /** Feeds a chunk; returns the events it completed. */
  push(chunk: string): SseEvent[] {
    this.#buffer += chunk;
    const out: SseEvent[] = [];
    let nl: number;
    while ((nl = this.#buffer.search(/\r\n|\n|\r/)) >= 0) {
      // a `\r` last in the buffer may be half of `\r\n`: wait for the next chunk
      if (nl === this.#buffer.length - 1 && this.#buffer.endsWith('\r')) break;
      const line = this.#buffer.slice(0, nl);
      const sepLength = this.#buffer.startsWith('\r\n', nl) ? 2 : 1;
      this.#buffer = this.#buffer.slice(nl + sepLength);
      const done = this.#line(line);
      if (done) out.push(done);
    }
    return out;
  }

  #line(line: string): SseEvent | undefined {
    if (line === '') {
      if (this.#data.length === 0) {
        this.#event = ''; // no data: nothing to dispatch (WHATWG)
        return undefined;
      }
      const e: SseEvent = {
        event: this.#event || 'message',
        data: this.#data.join('\n'),
        ...(this.#id !== undefined ? { id: this.#id } : {}),
      };
      this.#event = '';
      this.#data = [];
      return e;
    }
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.#event = value;
    else if (field === 'data') this.#data.push(value);
    else if (field === 'id') this.#id = value;
    return undefined;
  }
}
