import type { YamlPath } from '../yaml/problem.js';
import { HANDLER_KINDS, handlerNodeName, type HandlerKind } from '../model/dag.js';
import type { Step } from '../model/step.js';
import { checkKeys, isRecord, readMap, show, type Ctx } from './context.js';
import { wireSteps, type StepItem } from './graph.js';
import type { StepDefaults } from './step-defaults.js';
import { normalizeStep } from './step.js';

/** `steps`: a list (strings, mappings, nested lists = parallel groups) or a name -> step mapping. */
export const readSteps = (
  ctx: Ctx,
  v: unknown,
  type: 'chain' | 'graph',
  defaults: StepDefaults,
): Step[] => {
  const path: YamlPath = ['steps'];
  if (v === undefined || v === null) {
    ctx.report([], 'this DAG has no steps: add steps: with at least one step');
    return [];
  }
  const items: StepItem[] = [];
  if (isRecord(v)) {
    // A mapping of name -> step (a peer form); order is the order written.
    for (const [key, raw] of Object.entries(v)) {
      // The key is the step's name, also for the plain-string form (`build: make all`).
      const step = isRecord(raw)
        ? { name: key, ...raw }
        : typeof raw === 'string'
          ? { name: key, command: raw }
          : raw;
      const d = normalizeStep(ctx, step, [...path, key], defaults);
      if (d) items.push({ kind: 'step', draft: d });
    }
  } else if (Array.isArray(v)) {
    v.forEach((raw, i) => {
      if (Array.isArray(raw)) {
        if (raw.length === 0)
          ctx.report([...path, i], 'empty parallel group: list at least one step in it');
        const drafts = raw.flatMap((member, j) => {
          if (Array.isArray(member)) {
            ctx.report(
              [...path, i, j],
              'parallel groups cannot be nested: list the steps directly in the group',
            );
            return [];
          }
          const d = normalizeStep(ctx, member, [...path, i, j], defaults);
          return d ? [d] : [];
        });
        if (drafts.length > 0) items.push({ kind: 'group', drafts });
      } else {
        const d = normalizeStep(ctx, raw, [...path, i], defaults);
        if (d) items.push({ kind: 'step', draft: d });
      }
    });
  } else {
    ctx.report(path, `must be a list of steps, got ${show(v)}`);
    return [];
  }
  if (items.length === 0 && (Array.isArray(v) ? v.length === 0 : true))
    ctx.report(path, 'this DAG has no steps: add at least one step');
  return wireSteps(ctx, items, type);
};

/** `handlerOn`: `success`, `failure`, `cancel`, `exit`, each step-like; names are fixed. */
export const readHandlers = (
  ctx: Ctx,
  v: unknown,
  defaults: StepDefaults,
): Partial<Record<HandlerKind, Step>> => {
  const path: YamlPath = ['handlerOn'];
  const m = readMap(ctx, v, path, 'handlerOn');
  if (!m) return {};
  checkKeys(ctx, m, path, HANDLER_KINDS, 'handlerOn');
  const out: Partial<Record<HandlerKind, Step>> = {};
  for (const kind of HANDLER_KINDS) {
    const raw = m[kind];
    if (raw === undefined || raw === null) continue;
    const d = normalizeStep(ctx, raw, [...path, kind], defaults, `the ${kind} handler`);
    if (!d) continue;
    if (d.step.depends.length > 0)
      ctx.report(
        [...path, kind, 'depends'],
        'handlers run after all steps and cannot have depends',
      );
    if (d.step.parallel)
      ctx.report([...path, kind, 'parallel'], 'handlers cannot have parallel items');
    // spec: Events - run details name handler nodes onSuccess/onFailure/onCancel/onExit, so a
    // `name:` written in handlerOn is ignored (docs/decisions.md).
    d.step.name = handlerNodeName[kind];
    d.step.depends = [];
    out[kind] = d.step;
  }
  return out;
};
