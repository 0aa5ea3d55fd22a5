/**
 * Splits a command line shell-like: whitespace separates words; single quotes keep text
 * literally; double quotes keep text with `\"` and `\\` escapes; a backslash escapes the next
 * character outside quotes. Returns undefined when a quote is not closed.
 */
export const splitCommandLine = (line: string): string[] | undefined => {
  const words: string[] = [];
  let cur = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] ?? '';
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else cur += c;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (
        c === '\\' &&
        (line[i + 1] === '"' || line[i + 1] === '\\' || line[i + 1] === '$' || line[i + 1] === '`')
      )
        cur += line[++i];
      else cur += c;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(cur);
      cur = '';
      inWord = false;
    } else {
      inWord = true;
      if (c === '"' || c === "'") quote = c;
      else if (c === '\\' && i + 1 < line.length) cur += line[++i];
      else cur += c;
    }
  }
  if (quote) return undefined;
  if (inWord) words.push(cur);
  return words;
};
