/**
 * Splitting the value of a `parallel: ${VAR}` reference into items at run time (spec: Step
 * fields `parallel`; as the peer does).
 */

/** Delimiters tried after newlines, in tie-break order: the most frequent one wins. */
export const PARALLEL_ITEM_DELIMITERS: readonly string[] = ['\t', '|', ';', ','];

/**
 * JSON text with object keys sorted at every level, as the peer (Go's encoder) writes map
 * items, so equal items give equal text and therefore equal child-run params.
 */
const stableJson = (v: unknown): string => {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const rec = v as Record<string, unknown>;
    const fields = Object.keys(rec)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson(rec[k])}`);
    return `{${fields.join(',')}}`;
  }
  return JSON.stringify(v);
};

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
};

/**
 * Cuts `text` at characters for which `isSep` holds, outside quoted strings, and returns the
 * raw pieces (empty ones included). A quote opens only at the start of a piece (after blanks),
 * as in CSV, so an apostrophe inside a word (`don't`) is plain text; a quote that never closes
 * is plain text too.
 */
const cutOutsideQuotes = (text: string, isSep: (c: string) => boolean): string[] => {
  const pieces: string[] = [];
  let cur = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? '';
    if ((c === '"' || c === "'") && cur.trim() === '') {
      const end = closingQuote(text, i);
      if (end > i) {
        cur += text.slice(i, end + 1);
        i = end;
        continue;
      }
    }
    if (isSep(c)) {
      pieces.push(cur);
      cur = '';
    } else cur += c;
  }
  pieces.push(cur);
  return pieces;
};

/**
 * The items between separators: trimmed, a fully quoted item without its quotes (`\"` and
 * `\\` unescaped inside `"..."`), empty items dropped.
 */
const splitOutsideQuotes = (text: string, isSep: (c: string) => boolean): string[] =>
  cutOutsideQuotes(text, isSep)
    .map((piece) => unquote(piece.trim()))
    .filter((item) => item !== '');

/** Index of the quote closing the one at `open`, or -1. */
const closingQuote = (text: string, open: number): number => {
  const q = text[open];
  for (let i = open + 1; i < text.length; i++) {
    if (q === '"' && text[i] === '\\') i++;
    else if (text[i] === q) return i;
  }
  return -1;
};

const unquote = (item: string): string => {
  if (item.length < 2) return item;
  const q = item[0];
  if (
    (q !== '"' && q !== "'") ||
    item[item.length - 1] !== q ||
    closingQuote(item, 0) !== item.length - 1
  )
    return item;
  const body = item.slice(1, -1);
  return q === '"' ? body.replace(/\\(["\\])/g, '$1') : body;
};

/** How often `delim` occurs outside quoted strings. */
const countOutsideQuotes = (text: string, delim: string): number =>
  cutOutsideQuotes(text, (c) => c === delim).length - 1;

/**
 * The items of a `parallel` variable's value, in order (as the peer does):
 * 1. a JSON array: its elements; strings as they are, other values as JSON (object keys sorted);
 * 2. a single JSON object: one item, the text itself;
 * 3. text with line breaks: one item per line;
 * 4. otherwise the most frequent of tab, `|`, `;`, `,` (ties in that order) separates items;
 * 5. otherwise blanks separate items.
 * Text items honour quoted strings (`"a,b",c` is two items), are trimmed, and empty ones are
 * dropped. Zero items, and the spec's limit on the count, are for the caller to report.
 */
export const splitParallelItems = (value: string): string[] => {
  const text = value.trim();
  if (text === '') return [];
  if (text.startsWith('[')) {
    const parsed = parseJson(text);
    if (Array.isArray(parsed))
      return parsed.map((v: unknown) => (typeof v === 'string' ? v : stableJson(v)));
  }
  if (text.startsWith('{')) {
    const parsed = parseJson(text);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return [text];
  }
  if (/[\r\n]/.test(text)) return splitOutsideQuotes(text, (c) => c === '\n' || c === '\r');
  let best: string | undefined;
  let bestCount = 0;
  for (const delim of PARALLEL_ITEM_DELIMITERS) {
    const count = countOutsideQuotes(text, delim);
    if (count > bestCount) [best, bestCount] = [delim, count];
  }
  if (best !== undefined) return splitOutsideQuotes(text, (c) => c === best);
  return splitOutsideQuotes(text, (c) => /\s/.test(c));
};
