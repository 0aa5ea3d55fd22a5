import type { YamlPath } from './problem.js';

/** Where one node starts, and where its children start (keys of a mapping, items of a list). */
export interface PositionNode {
  readonly offset: number;
  readonly keys?: Map<string, PositionNode>;
  readonly items?: PositionNode[];
}

/**
 * Maps paths inside one YAML document to positions in the source text, so every problem can name
 * its line. A mapping entry is positioned at its key; a sequence item at its first character.
 * The position tree is built on first use only: valid files, the common case, never pay for it.
 */
export class SourceMap {
  private root: PositionNode | undefined;
  constructor(
    private readonly lines: LineIndex,
    private readonly build: () => PositionNode | undefined,
  ) {}

  /** The position of `path`, or of its nearest ancestor that has one. */
  positionOf(path: YamlPath): { line: number; column: number } | undefined {
    this.root ??= this.build();
    if (!this.root) return undefined;
    let node: PositionNode = this.root;
    for (const seg of path) {
      const next: PositionNode | undefined =
        typeof seg === 'number' ? node.items?.[seg] : node.keys?.get(seg);
      if (!next) break;
      node = next;
    }
    return this.lines.position(node.offset);
  }
}

/**
 * Offset -> 1-based line and column, by binary search over line starts (computed on first use).
 * Line breaks are `\r\n`, `\n` and a bare `\r`, as js-yaml reads them.
 */
export class LineIndex {
  private starts: number[] | undefined;
  constructor(private readonly text: string) {}

  position(offset: number): { line: number; column: number } {
    const starts = (this.starts ??= lineStarts(this.text));
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] ?? 0) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - (starts[lo] ?? 0) + 1 };
  }
}

const LF = 10;
const CR = 13;

const lineStarts = (text: string): number[] => {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === LF) starts.push(i + 1);
    else if (c === CR) {
      if (text.charCodeAt(i + 1) === LF) i++; // `\r\n` is one break
      starts.push(i + 1);
    }
  }
  return starts;
};
