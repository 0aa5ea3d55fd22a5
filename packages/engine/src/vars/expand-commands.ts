import { expandVarsSync, type ExpandOptions, type VarScope } from './expand.js';
import { expandForShell } from './shell-text.js';

/** A stretch of text, or the command between a pair of backticks. */
interface Part {
  readonly command: boolean;
  readonly text: string;
}

/**
 * Cuts `text` at unescaped backtick pairs. An unpaired or empty pair of backticks stays
 * literal text. `\\` is skipped as a pair so that `\\`` still opens a command.
 */
const splitBackticks = (text: string, keepEscapes: boolean): Part[] => {
  const parts: Part[] = [];
  let cur = '';
  let inCommand = false;
  let before = ''; // text collected before the open backtick, restored if it never closes
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    const next = text[i + 1];
    if (c === '\\' && (next === '\\' || next === '`')) {
      cur += next === '`' && !keepEscapes ? '`' : c + next;
      i++;
    } else if (c !== '`') cur += c;
    else if (!inCommand) {
      inCommand = true;
      before = cur;
      cur = '';
    } else {
      inCommand = false;
      if (cur === '')
        cur = `${before}\`\``; // an empty pair is literal text
      else {
        if (before !== '') parts.push({ command: false, text: before });
        parts.push({ command: true, text: cur });
        cur = '';
      }
      before = '';
    }
  }
  if (inCommand) cur = `${before}\`${cur}`; // an unclosed backtick is literal text
  if (cur !== '') parts.push({ command: false, text: cur });
  return parts;
};

/**
 * Expands variables like {@link expandVarsSync}, then, when `opts.backticks` is given, replaces
 * each `` `cmd` `` by the trimmed output of running it (spec: Variables). Commands run one at a
 * time, left to right. Commands are found in the text as written, before expansion, so a
 * variable whose value contains backticks is never executed (the peer would run it); with
 * `opts.posixShell`, a value inside a command is passed to the shell as a value
 * ({@link expandForShell}), so it cannot be run either.
 */
export const expandVars = async (
  text: string,
  scopes: readonly VarScope[],
  opts: ExpandOptions = {},
): Promise<string> => {
  const { backticks } = opts;
  if (backticks === undefined || !text.includes('`')) return expandVarsSync(text, scopes, opts);
  let out = '';
  for (const part of splitBackticks(text, opts.keepEscapes === true)) {
    if (!part.command) out += expandVarsSync(part.text, scopes, opts);
    else if (opts.posixShell !== true)
      out += (await backticks(expandVarsSync(part.text, scopes, opts), {})).trim();
    else {
      const cmd = expandForShell(part.text, scopes);
      out += (await backticks(cmd.text, cmd.env)).trim();
    }
  }
  return out;
};
