import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { NodeStatus, RunStatus } from '@trellis/core';
import type { DagRunRecord, NodeRecord, RunRef } from '@trellis/spec';
import type { ChildExpect, Expectation, NodeExpect, TextExpect } from './manifest.js';
import { mailText, type ReceivedMail, type ReceivedRequest } from './servers.js';

/*
 * Checks a finished corpus run against its expectation file. Every message names the DAG, the
 * step and the field, so a failure reads as "deploy-regions/step promote: stdout ...".
 */

const RUN: Record<Expectation['status'], RunStatus> = {
  succeeded: RunStatus.Succeeded,
  failed: RunStatus.Failed,
  cancelled: RunStatus.Cancelled,
  partial: RunStatus.PartiallySucceeded,
};
const NODE: Record<NodeExpect['status'], NodeStatus> = {
  'not started': NodeStatus.NotStarted,
  succeeded: NodeStatus.Succeeded,
  failed: NodeStatus.Failed,
  cancelled: NodeStatus.Cancelled,
  skipped: NodeStatus.Skipped,
  partial: NodeStatus.PartiallySucceeded,
};
const nameOf = <T extends string>(table: Record<T, number>, v: number): string =>
  Object.entries(table).find(([, n]) => n === v)?.[0] ?? String(v);

/** What a check reads besides the record. */
export interface CheckContext {
  readonly readRun: (ref: RunRef, root: RunRef) => Promise<DagRunRecord>;
  readonly home: string;
  readonly requests: readonly ReceivedRequest[];
  readonly mails: readonly ReceivedMail[];
}

export const checkText = (actual: string, want: TextExpect, at: string): void => {
  if (typeof want === 'string') return void expect(actual, at).toBe(want);
  for (const s of want.has ?? []) expect(actual, `${at} has`).toContain(s);
  for (const s of want.lacks ?? []) expect(actual, `${at} lacks`).not.toContain(s);
  if (want.match !== undefined) expect(actual, `${at} matches`).toMatch(new RegExp(want.match));
};

const fileText = (path: string): string =>
  path !== '' && existsSync(path) ? readFileSync(path, 'utf8') : '';

const checkNode = async (
  n: NodeRecord,
  want: NodeExpect,
  at: string,
  root: RunRef,
  ctx: CheckContext,
): Promise<void> => {
  expect(nameOf(NODE, n.status), `${at}: status (error: ${n.error})`).toBe(want.status);
  if (want.stdout !== undefined) checkText(fileText(n.stdout), want.stdout, `${at}: stdout`);
  if (want.stderr !== undefined) checkText(fileText(n.stderr), want.stderr, `${at}: stderr`);
  if (want.outputs !== undefined) expect(n.outputs, `${at}: outputs`).toEqual(want.outputs);
  if (want.retryCount !== undefined)
    expect(n.retryCount, `${at}: retryCount`).toBe(want.retryCount);
  if (want.doneCount !== undefined) expect(n.doneCount, `${at}: doneCount`).toBe(want.doneCount);
  if (want.exitCode !== undefined) expect(n.exitCode, `${at}: exitCode`).toBe(want.exitCode);
  if (want.error === '') expect(n.error, `${at}: error`).toBe('');
  else if (want.error !== undefined) expect(n.error, `${at}: error`).toContain(want.error);
  if (want.children !== undefined) {
    expect(
      n.children.map((c) => c.name),
      `${at}: child runs`,
    ).toEqual(want.children.map((c) => c.dag));
    for (const [i, c] of want.children.entries()) {
      const ref = n.children[i];
      if (ref) await checkChild(ref, c, `${at} > child ${i + 1} (${c.dag})`, root, ctx);
    }
  }
};

const paramsOf = (r: DagRunRecord): Record<string, string> =>
  Object.fromEntries(r.params.map((p) => [p.name, p.value]));

const checkParams = (r: DagRunRecord, want: Record<string, string>, at: string): void => {
  const got = paramsOf(r);
  for (const [k, v] of Object.entries(want)) expect(got[k], `${at}: param ${k}`).toBe(v);
};

const checkSteps = async (
  r: DagRunRecord,
  want: Record<string, NodeExpect>,
  at: string,
  root: RunRef,
  ctx: CheckContext,
): Promise<void> => {
  expect(r.nodes.map((n) => n.step.name).sort(), `${at}: the run's steps`).toEqual(
    Object.keys(want).sort(),
  );
  for (const n of r.nodes) {
    const w = want[n.step.name];
    if (w) await checkNode(n, w, `${at}/step ${n.step.name}`, root, ctx);
  }
};

const checkChild = async (
  ref: { dagRunId: string; name: string },
  want: ChildExpect,
  at: string,
  root: RunRef,
  ctx: CheckContext,
): Promise<void> => {
  const r = await ctx.readRun({ name: ref.name, dagRunId: ref.dagRunId }, root);
  expect(nameOf(RUN, r.status), `${at}: status (error: ${r.error})`).toBe(want.status);
  if (want.params) checkParams(r, want.params, at);
  if (want.steps) await checkSteps(r, want.steps, at, root, ctx);
};

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const HANDLERS = ['onSuccess', 'onFailure', 'onCancel', 'onExit'] as const;

const checkServers = (want: Expectation, at: string, ctx: CheckContext): void => {
  for (const h of want.http ?? []) {
    const hits = ctx.requests.filter((r) => r.method === h.method && r.path === h.path);
    const where = `${at}: ${h.method} ${h.path}`;
    if (h.count !== undefined) expect(hits.length, `${where} count`).toBe(h.count);
    else expect(hits.length, `${where} count`).toBeGreaterThan(0);
    const last = hits.at(-1);
    if (last && h.body !== undefined) checkText(last.body, h.body, `${where} body`);
    for (const [k, v] of Object.entries(h.headers ?? {}))
      expect(last?.headers[k.toLowerCase()], `${where} header ${k}`).toBe(v);
  }
  if (want.mail === undefined) return;
  expect(ctx.mails.length, `${at}: mails received`).toBe(want.mail.length);
  for (const [i, m] of want.mail.entries()) {
    const found = ctx.mails.find((x) => [...x.to].sort().join() === [...m.to].sort().join());
    expect(found, `${at}: mail ${i + 1} to ${m.to.join(', ')}`).toBeDefined();
    if (!found) continue;
    const { subject, body } = mailText(found.raw);
    if (m.subject !== undefined) expect(subject, `${at}: mail ${i + 1} subject`).toBe(m.subject);
    if (m.body !== undefined) checkText(body, m.body, `${at}: mail ${i + 1} body`);
  }
};

/** Checks `r` (the finished run of DAG `dag`) against `want`. */
export const checkRun = async (
  dag: string,
  r: DagRunRecord,
  want: Expectation,
  ctx: CheckContext,
): Promise<void> => {
  const root = { name: r.name, dagRunId: r.dagRunId };
  expect(nameOf(RUN, r.status), `${dag}: run status (error: ${r.error})`).toBe(want.status);
  if (want.error === '') expect(r.error, `${dag}: run error`).toBe('');
  else if (want.error !== undefined) expect(r.error, `${dag}: run error`).toContain(want.error);
  if (want.runParams) checkParams(r, want.runParams, dag);
  await checkSteps(r, want.steps, dag, root, ctx);
  for (const h of HANDLERS) {
    const w = want.handlers?.[h];
    const n = r[h];
    if (!w) expect(n?.status ?? NodeStatus.NotStarted, `${dag}: handler ${h} ran`).toBe(0);
    else if (!n) expect.fail(`${dag}: handler ${h} did not run`);
    else await checkNode(n, w, `${dag}/handler ${h}`, root, ctx);
  }
  const log = fileText(r.log);
  for (const s of want.log ?? []) expect(log, `${dag}: run log`).toContain(s);
  if (want.runLogUnder !== undefined)
    expect(r.log, `${dag}: run log path`).toMatch(
      new RegExp(`^${escapeRe(join(ctx.home, want.runLogUnder))}/`),
    );
  for (const [path, w] of Object.entries(want.homeFiles ?? {})) {
    const full = join(ctx.home, path);
    if (w === null) expect(existsSync(full), `${dag}: ~/${path} exists`).toBe(false);
    else checkText(fileText(full), w, `${dag}: ~/${path}`);
  }
  checkServers(want, dag, ctx);
};
