import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expandForShell, isPosixShell } from './shell-text.js';

const dir = mkdtempSync(join(tmpdir(), 'trellis-shell-text-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const pwned = join(dir, 'pwned');

/** Values that a pasted text would mangle or run. */
const NASTY: Record<string, string> = {
  JSON: '{"total": 2}',
  SPACES: '  two  spaces  ',
  DOLLAR: 'cost $HOME ${PATH} $(id)',
  TICKS: 'run `id` now',
  LINES: 'line one\nline "two"\n',
  SINGLE: "it's 'quoted'",
  INJECT: `"; touch ${pwned}; "`,
  INJECT_SQ: `'; touch ${pwned}; '`,
  GLOBBY: '*',
  TILDE: '~/data',
  MIX: 'it\'s `id` "q" $X',
};

/** Runs `text` with sh (and bash), its variables resolved from NASTY; the stdout. */
const run = (text: string, shell = 'sh'): string => {
  const { text: script, env } = expandForShell(text, [NASTY]);
  return execFileSync(shell, ['-e', '-c', script], {
    env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/home/h', ...env },
    cwd: dir,
    encoding: 'utf8',
  });
};

describe('expandForShell, run by a real shell', () => {
  it.each(Object.keys(NASTY))('passes %s byte for byte inside double quotes', (name) => {
    expect(run(`printf '%s' "\${${name}}"`)).toBe(NASTY[name]);
    expect(run(`printf '%s' "$${name}"`, 'bash')).toBe(NASTY[name]);
    expect(existsSync(pwned)).toBe(false);
  });

  it.each(Object.keys(NASTY))('passes %s byte for byte inside single quotes', (name) => {
    expect(run(`printf '%s' 'before \${${name}} after'`)).toBe(`before ${NASTY[name]} after`);
    expect(existsSync(pwned)).toBe(false);
  });

  it('keeps the JSON quotes so grep finds them (issue #16)', () => {
    expect(run(`echo "\${JSON}" | grep -c '"total": 2'`)).toBe('1\n');
  });

  it('splits an unquoted value into words as the shell does, without running any of it', () => {
    expect(run('printf "[%s]" ${SPACES} ${INJECT} ${TICKS}')).toBe(
      `[two][spaces][";][touch][${pwned};]["][run][\`id\`][now]`,
    );
    expect(existsSync(pwned)).toBe(false);
  });

  it('expands references in an unquoted here-document and in $(...)', () => {
    expect(run('cat <<EOF\nv=${JSON} ${SINGLE}\nEOF\necho "$(printf %s "${TICKS}")"')).toBe(
      `v=${NASTY.JSON} ${NASTY.SINGLE}\nrun \`id\` now\n`,
    );
  });

  it('writes values into a quoted here-document, which the shell does not expand', () => {
    expect(run("cat <<'EOF'\n${JSON}\nEOF")).toBe(`${NASTY.JSON}\n`);
    expect(() => expandForShell("cat <<'EOF'\n${V}\nEOF", [{ V: 'x\nEOF\nid' }])).toThrow(
      /would end it early/,
    );
  });

  it.each(['sh', 'bash'])(
    'follows quotes through $(...), backticks, functions, comments, <<- and $((...)) in %s',
    (shell) => {
      const v = NASTY.MIX ?? '';
      const x = (text: string): string => run(text.replaceAll('{X}', '{MIX}'), shell);
      expect(x(`printf '%s' "$(printf '%s' 'v \${X}')"`)).toBe(`v ${v}`);
      expect(x('printf \'%s\' "`printf \'%s\' \\"${X}\\"`"')).toBe(v);
      expect(x(`f() { printf '%s' "$1"; }; f "\${X}" # don't ' \${X}\nprintf '%s' '|\${X}'`)).toBe(
        `${v}|${v}`,
      );
      expect(x(`cat <<-EOF\n\t\${X} it's\n\tEOF\nprintf %s "\${X}"`)).toBe(`${v} it's\n${v}`);
      expect(x(`n=$(( 1 << 2 )); printf '%s' "$n \${X}"\nprintf '%s' '|\${X}'`)).toBe(
        `4 ${v}|${v}`,
      );
      expect(run(`printf '%s' $'tab\\t\${SINGLE}'`, 'bash')).toBe(`tab\t${NASTY.SINGLE}`);
    },
  );

  it('writes plain values in, and reuses the step variable that already holds a value', () => {
    expect(expandForShell('echo ${A} $B "${C}"', [{ A: 'a-1.2', B: 'x/y', C: 'c d' }])).toEqual({
      text: 'echo a-1.2 x/y "${SVC_VALUE_1}"',
      env: { SVC_VALUE_1: 'c d' },
    });
    expect(expandForShell('echo "${C}" "$C"', [{ C: 'c d' }], { C: 'c d' })).toEqual({
      text: 'echo "${C}" "${C}"',
      env: {},
    });
  });

  it('writes a value starting with ~ in, so the shell still reads it as the home folder', () => {
    expect(run('printf %s ${TILDE}')).toBe('/home/h/data');
    expect(expandForShell('ls ${D}', [{ D: '~/data' }]).text).toBe('ls ~/data');
  });

  it("leaves '$X', \\$X, comments and unknown names as before", () => {
    const r = expandForShell("echo '$A' \\$A ${NOPE} # it's ${A}\necho $A", [{ A: 'a b' }]);
    expect(r.text).toBe("echo '$A' $A ${NOPE} # it's ${A}\necho ${SVC_VALUE_1}");
  });

  it('reads JSON paths and positional params', () => {
    const scopes = [{ J: '{"a":{"b":"x y"}}', 1: 'first one' }];
    const r = expandForShell('echo "${J.a.b}" $1', scopes);
    expect(r.env).toEqual({ SVC_VALUE_1: 'x y', SVC_VALUE_2: 'first one' });
  });

  it('knows the POSIX shells by name or path', () => {
    expect(['sh', '/bin/bash', '/usr/bin/zsh', 'dash'].map(isPosixShell)).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(['python3', 'pwsh', 'fish', 'node'].map(isPosixShell)).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });
});
