import { resolve } from 'node:path';
import type { Step } from '@trellis/spec';
import { expandVarsSync } from '../../vars/expand.js';
import { expandForProgram, shellProgram, type ShellText } from '../../vars/shell-text.js';
import { expandFull, type NodeScope } from './node-scope.js';
import type { RunContext } from '../run-context.js';

/** Expands every string inside a JSON-like value. */
const expandDeep = async (v: unknown, f: (s: string) => Promise<string>): Promise<unknown> => {
  if (typeof v === 'string') return f(v);
  if (Array.isArray(v)) return Promise.all(v.map((x) => expandDeep(x, f)));
  if (typeof v === 'object' && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = await expandDeep(x, f);
    return out;
  }
  return v;
};

/** `#!/usr/bin/env bash -e` -> `bash`; `#!/bin/sh` -> `/bin/sh`; undefined without a shebang. */
const shebangProgram = (script: string): string | undefined => {
  const text = script.trimStart();
  if (!text.startsWith('#!')) return undefined;
  const words = text.slice(2).split('\n')[0]?.trim().split(/\s+/) ?? [];
  const [first, ...rest] = words;
  return first?.endsWith('/env') ? rest.find((w) => !w.startsWith('-')) : first;
};

/**
 * The program that reads a shell step's text, as the shell executor starts it: the `command`
 * for a script with one, else a script's shebang (when the step names no shell), else the shell.
 */
const readerOf = (step: Step, defaultShell: string): string => {
  const shell = shellProgram(step.shell?.trim() ? step.shell : defaultShell || 'sh');
  if (step.script === undefined) return shell;
  if (step.command !== undefined) return step.command;
  return (step.shell?.trim() ? undefined : shebangProgram(step.script)) ?? shell;
};

/**
 * The text a shell step runs (its script, else its command line) with variables expanded for the
 * program that reads it: a POSIX shell gets values it cannot mistake for syntax (and the
 * variables holding them), anything else the values written in.
 */
const shellText = (
  ctx: RunContext,
  step: Step,
  scope: NodeScope,
): { script?: ShellText; line?: ShellText } => {
  const program = readerOf(step, ctx.deps.defaultShell);
  const forProgram = (t: string): ShellText =>
    expandForProgram(t, scope.commandScopes, scope.env, program);
  if (step.script !== undefined) return { script: forProgram(step.script) };
  return step.cmdWithArgs !== undefined ? { line: forProgram(step.cmdWithArgs) } : {};
};

/**
 * A docker step's script, which the container runs as `<shell> -c <script>` with the step's
 * environment (its command and arguments are a program's arguments: values are written in).
 */
const dockerText = (step: Step, scope: NodeScope): { script?: ShellText; line?: ShellText } =>
  step.script === undefined
    ? {}
    : {
        script: expandForProgram(
          step.script,
          scope.commandScopes,
          scope.env,
          shellProgram(step.shell ?? 'sh'),
        ),
      };

/** `V='value'` lines a POSIX shell reads before `t.text` (a `'` in a value written `'\''`). */
const withAssignments = (t: ShellText): string => {
  const set = Object.entries(t.env).map(([k, v]) => `${k}='${v.replaceAll("'", "'\\''")}'\n`);
  if (set.length === 0) return t.text;
  const shebang = /^#![^\n]*\n/.exec(t.text)?.[0] ?? '';
  return `${shebang}${set.join('')}${t.text.slice(shebang.length)}`;
};

/**
 * The text an ssh step runs on the remote host, which has none of the step's variables: a value
 * that is not plain is set by an assignment in front of the text (the remote shell is taken to
 * be a POSIX one; a script for another interpreter gets the values written in).
 */
const sshText = (step: Step, scope: NodeScope): { script?: string; line?: string } => {
  const forProgram = (t: string, program: string): string =>
    withAssignments(expandForProgram(t, scope.commandScopes, {}, program));
  if (step.script !== undefined)
    return { script: forProgram(step.script, shebangProgram(step.script) ?? step.shell ?? 'sh') };
  return step.cmdWithArgs !== undefined ? { line: forProgram(step.cmdWithArgs, 'sh') } : {};
};

/**
 * The step with its command, script, paths and executor config expanded for this execution, and
 * the variables to add to its process environment: command text sees the step's variables only,
 * paths and config every variable. Throws when a value cannot be placed in a shell text.
 */
export const expandStep = async (
  ctx: RunContext,
  step: Step,
  scope: NodeScope,
): Promise<{ step: Step; env: Readonly<Record<string, string>> }> => {
  const cmd = (t: string): string => expandVarsSync(t, scope.commandScopes);
  const full = (t: string): Promise<string> => expandFull(ctx, scope, t);
  const config = await expandDeep(step.executor.config, full);
  const type = step.executor.type;
  const sh =
    type === 'shell'
      ? shellText(ctx, step, scope)
      : type === 'docker'
        ? dockerText(step, scope)
        : {};
  const ssh = type === 'ssh' ? sshText(step, scope) : {};
  const line = ssh.line ?? sh.line?.text;
  const script = ssh.script ?? sh.script?.text;
  const expanded: Step = {
    ...step,
    ...(step.command !== undefined ? { command: cmd(step.command) } : {}),
    args: step.args.map(cmd),
    ...(step.cmdWithArgs !== undefined ? { cmdWithArgs: line ?? cmd(step.cmdWithArgs) } : {}),
    ...(step.script !== undefined ? { script: script ?? cmd(step.script) } : {}),
    ...(step.stdout !== undefined ? { stdout: resolve(scope.cwd, await full(step.stdout)) } : {}),
    ...(step.stderr !== undefined ? { stderr: resolve(scope.cwd, await full(step.stderr)) } : {}),
    executor: { type: step.executor.type, config: config as Record<string, unknown> },
  };
  return { step: expanded, env: { ...sh.line?.env, ...sh.script?.env } };
};
