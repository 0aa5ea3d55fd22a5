import { basename } from 'node:path';
import { expandVarsSync, resolveRef, type VarScope } from './expand.js';

/**
 * Variables in text that a POSIX shell runs (docs/dag-reference.md, "Variables in shell
 * commands"). A value never becomes shell syntax: a value of plain characters is written into the
 * text, any other value is passed in the environment and the text refers to it, so the shell
 * expands it byte for byte (quotes, blanks, `$`, backticks, line breaks).
 */

/** Text for the shell, and the variables to add to its process environment. */
export interface ShellText {
  readonly text: string;
  /** `SVC_VALUE_n` variables holding the values the text refers to. */
  readonly env: Readonly<Record<string, string>>;
}

/** Programs that read `${NAME}`, `'...'` and `"..."` as a POSIX shell does. */
const POSIX_SHELLS = new Set(['sh', 'bash', 'dash', 'ash', 'ksh', 'mksh', 'zsh', 'yash']);

/** Whether `program` (a name or a path) is a POSIX shell. */
export const isPosixShell = (program: string): boolean => POSIX_SHELLS.has(basename(program));

/**
 * Values of these characters cannot change the shell syntax around them; written in, they mean
 * what the peer's pasting meant (`~/data` at the start of a word is still the home folder).
 */
const PLAIN = /^(?:[A-Za-z0-9_@%+.,/:~-][A-Za-z0-9_@%+=.,/:~-]*)?$/;
/** A reference where the shell expands: `${...}`, or `$NAME`/`$1`. */
const REF_AT = /\$\{([^{}\s]+)\}|\$([A-Za-z_][A-Za-z0-9_]*|[0-9])/y;
/** `'$X'` / `'${X}'`: a reference wrapped in single quotes, left alone (as the peer does). */
const WRAPPED_AT = /'\$(?:\{[^{}\s]+\}|[A-Za-z_][A-Za-z0-9_]*|[0-9])'/y;
/** Escapes and references in single-quoted text or a here-document line. */
const ESCAPE_OR_REF = /\\\\|\\\$|\$\{([^{}\s]+)\}|\$([A-Za-z_][A-Za-z0-9_]*|[0-9])/g;
/** A here-document operator and its delimiter word: `<<EOF`, `<<-'EOF'`, `<< "EOF"`. */
const HEREDOC_AT = /<<(-?)[ \t]*((?:[^\s;&|<>()'"\\]|'[^']*'|"[^"]*"|\\.)+)/y;
/** Characters after which a `#` starts a comment. */
const WORD_END = /[\s;&|()<>]/;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Where the lexer is: plain text, `"..."`, `` `...` `` or `$(...)` (with its open parentheses). */
interface Frame {
  readonly kind: 'top' | 'double' | 'backtick' | 'paren';
  depth: number;
}

interface Heredoc {
  readonly delim: string;
  readonly quoted: boolean;
  readonly stripTabs: boolean;
}

/** One pass over shell text, tracking quotes, substitutions, comments and here-documents. */
class ShellRewriter {
  readonly #out: string[] = [];
  readonly #env: Record<string, string> = {};
  readonly #byValue = new Map<string, string>();
  readonly #stack: Frame[] = [{ kind: 'top', depth: 0 }];
  #heredocs: Heredoc[] = [];
  #i = 0;

  constructor(
    private readonly text: string,
    private readonly scopes: readonly VarScope[],
    private readonly procEnv: Readonly<Record<string, string>>,
  ) {}

  run(): ShellText {
    while (this.#i < this.text.length) {
      const frame = this.#stack[this.#stack.length - 1] ?? { kind: 'top', depth: 0 };
      if (frame.kind === 'double') this.#inDouble();
      else this.#unquoted(frame);
    }
    return { text: this.#out.join(''), env: this.#env };
  }

  #emit(s: string, advance = s.length): void {
    this.#out.push(s);
    this.#i += advance;
  }

  /** A backslash: `\$` is a plain `$` (the shell may expand it), anything else stays escaped. */
  #escape(inDouble: boolean): void {
    const next = this.text[this.#i + 1] ?? '';
    if (next === '$') this.#emit('$', 2);
    else if (!inDouble || '\\`"'.includes(next)) this.#emit(`\\${next}`, 2);
    else this.#emit('\\', 1);
  }

  #inDouble(): void {
    const c = this.text[this.#i] ?? '';
    if (c === '\\') this.#escape(true);
    else if (c === '"') {
      this.#stack.pop();
      this.#emit(c);
    } else if (c === '`') {
      this.#stack.push({ kind: 'backtick', depth: 0 });
      this.#emit(c);
    } else if (c === '$') this.#dollar(true);
    else this.#emit(c);
  }

  #unquoted(frame: Frame): void {
    const c = this.text[this.#i] ?? '';
    const prev = this.#i === 0 ? ' ' : (this.text[this.#i - 1] ?? ' ');
    if (c === '\\') this.#escape(false);
    else if (c === "'") this.#singleOrWrapped();
    else if (c === '"' || (c === '`' && frame.kind !== 'backtick')) {
      this.#stack.push({ kind: c === '"' ? 'double' : 'backtick', depth: 0 });
      this.#emit(c);
    } else if (c === '`') {
      this.#stack.pop();
      this.#emit(c);
    } else if (c === '#' && WORD_END.test(prev)) this.#comment();
    else if (c === '$') this.#dollar(false);
    else if (c === '<' && frame.depth === 0 && this.#heredocOperator()) return;
    else {
      if (frame.kind === 'paren' && c === '(') frame.depth++;
      if (frame.kind === 'paren' && c === ')' && frame.depth-- === 0) this.#stack.pop();
      this.#emit(c);
      if (c === '\n' && this.#heredocs.length > 0) this.#heredocBodies();
    }
  }

  #comment(): void {
    const end = this.text.indexOf('\n', this.#i);
    this.#emit(this.text.slice(this.#i, end === -1 ? undefined : end));
  }

  /** `$(`, `$'...'`, a reference, or a plain `$`. */
  #dollar(inDouble: boolean): void {
    const next = this.text[this.#i + 1];
    if (next === '(') {
      this.#stack.push({ kind: 'paren', depth: 0 });
      this.#emit('$(');
      return;
    }
    if (next === "'" && !inDouble) {
      this.#emit('$', 1);
      this.#single(true);
      return;
    }
    REF_AT.lastIndex = this.#i;
    const m = REF_AT.exec(this.text);
    if (!m) {
      this.#emit('$');
      return;
    }
    const [whole, braced, bare] = m;
    const value = resolveRef(this.scopes, braced, bare);
    this.#emit(
      value === undefined ? whole : this.#ref(value, bare ?? braced, 'expand'),
      whole.length,
    );
  }

  #singleOrWrapped(): void {
    WRAPPED_AT.lastIndex = this.#i;
    const wrapped = WRAPPED_AT.exec(this.text);
    if (wrapped) this.#emit(wrapped[0]);
    else this.#single(false);
  }

  /** `'...'` (or `$'...'`, where `\'` does not close): references become `'"${V}"'`. */
  #single(ansi: boolean): void {
    let end = this.#i + 1;
    while (end < this.text.length && this.text[end] !== "'")
      end += ansi && this.text[end] === '\\' ? 2 : 1;
    const body = this.text.slice(this.#i + 1, end);
    const closed = end < this.text.length ? "'" : '';
    this.#emit(`'${this.#escapesAndRefs(body, 'single')}${closed}`, end + 1 - this.#i);
  }

  #escapesAndRefs(text: string, mode: 'single' | 'expand'): string {
    return text.replace(ESCAPE_OR_REF, (whole: string, braced?: string, bare?: string) => {
      if (whole === '\\$') return '$';
      const value = resolveRef(this.scopes, braced, bare);
      return value === undefined ? whole : this.#ref(value, bare ?? braced, mode);
    });
  }

  /**
   * What a reference to `value` becomes: the value itself when it is plain, else a reference to
   * a variable holding it (the step's own `name` when the process has it with this value).
   */
  #ref(value: string, name: string | undefined, mode: 'single' | 'expand'): string {
    if (PLAIN.test(value)) return value;
    let v =
      name !== undefined && NAME.test(name) && this.procEnv[name] === value ? name : undefined;
    if (v === undefined) {
      v = this.#byValue.get(value) ?? `SVC_VALUE_${this.#byValue.size + 1}`;
      this.#byValue.set(value, v);
      this.#env[v] = value;
    }
    return mode === 'single' ? `'"\${${v}}"'` : `\${${v}}`;
  }

  #heredocOperator(): boolean {
    HEREDOC_AT.lastIndex = this.#i;
    const m = this.text[this.#i + 2] === '<' ? null : HEREDOC_AT.exec(this.text);
    if (!m) return false;
    const [whole, dash, word = ''] = m;
    const quoted = /['"\\]/.test(word);
    this.#heredocs.push({ delim: word.replace(/['"\\]/g, ''), quoted, stripTabs: dash === '-' });
    this.#emit(whole);
    return true;
  }

  /** The bodies of the here-documents opened on the line that just ended, in order. */
  #heredocBodies(): void {
    for (const doc of this.#heredocs) {
      const isEnd = (line: string): boolean =>
        (doc.stripTabs ? line.replace(/^\t+/, '') : line) === doc.delim;
      while (this.#i < this.text.length) {
        const nl = this.text.indexOf('\n', this.#i);
        const line = this.text.slice(this.#i, nl === -1 ? undefined : nl);
        const eol = nl === -1 ? '' : '\n';
        if (isEnd(line)) {
          this.#emit(line + eol);
          break;
        }
        this.#emit(this.#bodyLine(line, doc, isEnd) + eol, line.length + eol.length);
      }
    }
    this.#heredocs = [];
  }

  /**
   * A line of a here-document: the shell expands references of an unquoted one (`<<EOF`); a
   * quoted one (`<<'EOF'`) is literal, so values are written in, unless one would end it early.
   */
  #bodyLine(line: string, doc: Heredoc, isEnd: (l: string) => boolean): string {
    if (!doc.quoted) return this.#escapesAndRefs(line, 'expand');
    const pasted = expandVarsSync(line, this.scopes);
    if (pasted.split('\n').some(isEnd))
      throw new Error(
        `a value in the here-document <<'${doc.delim}' contains the line ${JSON.stringify(doc.delim)}, which would end it early: use <<${doc.delim} (unquoted) so the shell expands the value`,
      );
    return pasted;
  }
}

/**
 * `text` for a POSIX shell with its variable references resolved from `scopes`: a value of plain
 * characters is written in; any other value is left for the shell to expand from the process
 * environment (`procEnv` when it holds the name with that value, else a new `SVC_VALUE_n`), as
 * `${V}` where the shell expands and as `'"${V}"'` inside single quotes. `\$` becomes `$`;
 * `'$X'` and unknown names stay as written. Throws when a value would end a quoted
 * here-document early.
 */
export const expandForShell = (
  text: string,
  scopes: readonly VarScope[],
  procEnv: Readonly<Record<string, string>> = {},
): ShellText => new ShellRewriter(text, scopes, procEnv).run();

/** The program of a shell line such as `/bin/bash -o pipefail` (its first word). */
export const shellProgram = (shellLine: string): string => shellLine.trim().split(/\s+/)[0] ?? '';

/**
 * `text` for `program` to run: for a POSIX shell as {@link expandForShell} makes it; for any
 * other program (an interpreter, a non-POSIX shell) with the values written in as they are.
 */
export const expandForProgram = (
  text: string,
  scopes: readonly VarScope[],
  procEnv: Readonly<Record<string, string>>,
  program: string,
): ShellText =>
  isPosixShell(program)
    ? expandForShell(text, scopes, procEnv)
    : { text: expandVarsSync(text, scopes), env: {} };
