import type { YamlPath } from '../yaml/problem.js';
import { HANDLER_KINDS, handlerNodeName, type HandlerKind } from '../model/dag.js';
import type { Step } from '../model/step.js';
import { checkKeys, isRecord, readMap, show, type Ctx } from './context.js';
import { wireSteps, type StepItem } from './graph.js';
import type { StepDefaults } from './step-defaults.js';
import { normalizeStep } from './step.js';

/**
 * `steps`: a list (strings, mappings, nested lists = parallel groups) or a name -> step mapping.
 * No steps at all (no key, nothing, `[]`, `{}`) is a valid DAG whose runs succeed at once, as with
 * the peer: teams keep such files as shared defaults (docs/decisions.md, "A DAG with no steps").
 */
export const readSteps = (
  ctx: Ctx,
  v: unknown,
  type: 'chain' | 'graph',
  defaults: StepDefaults,
): Step[] => {
  const path: YamlPath = ['steps'];
  if (v === undefined || v === null) return [];
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
  return wireSteps(ctx, items, type);
};

/**
 * The key each handler kind is written as: the spec's keys in any case (`Exit` is `exit`, as the
 * peer reads them; docs/decisions.md, "Handler keys in any case"). Other keys are reported with
 * the key they were likely meant to be; a kind written twice (`exit` and `Exit`) is a problem.
 */
const handlerKeys = (
  ctx: Ctx,
  m: Record<string, unknown>,
  path: YamlPath,
): Map<HandlerKind, string> => {
  const keys = new Map<HandlerKind, string>();
  const unknown: Record<string, unknown> = {};
  for (const key of Object.keys(m)) {
    const kind = HANDLER_KINDS.find((k) => k === key.toLowerCase());
    if (kind === undefined) unknown[key] = m[key];
    else if (keys.has(kind))
      ctx.report(
        [...path, key],
        `${JSON.stringify(key)} and ${JSON.stringify(keys.get(kind))} are the same handler: keep one of them`,
      );
    else keys.set(kind, key);
  }
  checkKeys(ctx, unknown, path, HANDLER_KINDS, 'handlerOn');
  return keys;
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
  const keys = handlerKeys(ctx, m, path);
  const out: Partial<Record<HandlerKind, Step>> = {};
  for (const [kind, key] of keys) {
    const raw = m[key];
    if (raw === undefined || raw === null) continue;
    const d = normalizeStep(ctx, raw, [...path, key], defaults, `the ${kind} handler`);
    if (!d) continue;
    if (d.step.depends.length > 0)
      ctx.report([...path, key, 'depends'], 'handlers run after all steps and cannot have depends');
    if (d.step.parallel)
      ctx.report([...path, key, 'parallel'], 'handlers cannot have parallel items');
    // spec: Events - run details name handler nodes onSuccess/onFailure/onCancel/onExit, so a
    // `name:` written in handlerOn is ignored (docs/decisions.md).
    d.step.name = handlerNodeName[kind];
    d.step.depends = [];
    out[kind] = d.step;
  }
  return out;
};
