import type { ApiLogChunk } from '@trellis/contract';

/*
 * Follows a growing log through the API's line windows (`offset` + `limit`, 1-based), the way
 * `tail -f` does: each read starts at the last line already held, because that line may have
 * been caught half-written, and replaces it. Reads of `limit` lines repeat at once until the end
 * is reached, so a 200,000-line log arrives in a few large windows instead of one huge body.
 * Lines are kept in one array that only grows at the end; `version` tells views to redraw.
 */

/** Reads lines `offset .. offset+limit-1` of the log. */
export type ReadLogWindow = (offset: number, limit: number) => Promise<ApiLogChunk>;

/** Largest window the API serves (docs/decisions.md: limit at most 10000). */
export const MAX_WINDOW = 10_000;

export const splitLines = (content: string, lineCount: number): string[] => {
  if (lineCount === 0 || content === '') return [];
  const lines = content.split('\n');
  if (lines.length > lineCount && lines[lines.length - 1] === '') lines.pop();
  return lines;
};

export class LogFollower {
  readonly lines: string[] = [];
  /** Bumped on every change of `lines`. */
  version = 0;
  /** Lines in the log as last reported (may be an estimate for huge logs). */
  totalLines = 0;
  #busy: Promise<number> | undefined;

  constructor(
    private readonly read: ReadLogWindow,
    private readonly window = MAX_WINDOW,
  ) {}

  /** Where the next read starts: the last held line again (it may have grown), or line 1. */
  nextOffset(): number {
    return Math.max(1, this.lines.length);
  }

  /** Puts a window read at `offset` in place: lines from `offset` on are replaced. */
  apply(offset: number, chunk: ApiLogChunk): boolean {
    const incoming = splitLines(chunk.content, chunk.lineCount);
    this.totalLines = chunk.totalLines;
    const start = offset - 1;
    if (incoming.length === 0) return false;
    let changed = this.lines.length !== start + incoming.length;
    for (let i = 0; !changed && i < incoming.length; i++)
      changed = this.lines[start + i] !== incoming[i];
    if (!changed) return false;
    this.lines.length = Math.min(this.lines.length, start);
    for (const l of incoming) this.lines.push(l);
    this.version++;
    return true;
  }

  /**
   * Reads until the end of the log as it is now; resolves with the number of lines added (or
   * changed). Concurrent calls share one pass.
   */
  poll(): Promise<number> {
    this.#busy ??= this.#pump().finally(() => {
      this.#busy = undefined;
    });
    return this.#busy;
  }

  async #pump(): Promise<number> {
    const before = this.lines.length;
    let changedAny = false;
    for (;;) {
      const offset = this.nextOffset();
      const chunk = await this.read(offset, this.window);
      if (this.apply(offset, chunk)) changedAny = true;
      // A full window means more lines follow: read on at once.
      if (chunk.lineCount < this.window) break;
    }
    const added = this.lines.length - before;
    return added > 0 ? added : changedAny ? 1 : 0;
  }
}
