import type { YamlPath } from '../yaml/problem.js';
import type { Step } from '../model/step.js';
import { suggest, type Ctx } from './context.js';
import type { DraftStep } from './step.js';

/** One entry of `steps`: a step, or a nested list (a parallel group). */
export type StepItem =
  | { readonly kind: 'step'; readonly draft: DraftStep }
  | { readonly kind: 'group'; readonly drafts: readonly DraftStep[] };

const nameWord = (hint: string): string => {
  const base = hint.split('/').pop() ?? hint;
  return base.replace(/[^A-Za-z0-9_.-]+/g, '_') || 'step';
};

/**
 * Gives every unnamed step its generated name (spec: `step N`; group members
 * `parallel_{group}_{command}_{index}`), where N and {group} are the 1-based position in
 * `steps`, bumped until free, and {index} is the member's 1-based position in its group.
 * Reports duplicate explicit names.
 */
const assignNames = (ctx: Ctx, items: readonly StepItem[]): void => {
  const taken = new Map<string, YamlPath>();
  const all = items.flatMap((it) => (it.kind === 'step' ? [it.draft] : it.drafts));
  for (const d of all) {
    if (!d.explicitName) continue;
    const first = taken.get(d.step.name);
    if (first)
      ctx.report(
        [...d.path, 'name'],
        `duplicate step name ${JSON.stringify(d.step.name)}: step names must be unique`,
      );
    else taken.set(d.step.name, d.path);
  }
  const claim = (make: (n: number) => string, start: number, d: DraftStep): void => {
    let n = start;
    while (taken.has(make(n))) n++;
    d.step.name = make(n);
    taken.set(d.step.name, d.path);
  };
  items.forEach((it, i) => {
    if (it.kind === 'step') {
      if (!it.draft.explicitName) claim((n) => `step ${n}`, i + 1, it.draft);
      return;
    }
    it.drafts.forEach((d, j) => {
      if (!d.explicitName) claim((n) => `parallel_${i + 1}_${nameWord(d.nameHint)}_${n}`, j + 1, d);
    });
  });
};

/**
 * Settles names and dependencies: generated names, ids rewritten to names, chain edges for
 * `type: chain` (each item depends on the previous item's steps unless it wrote `depends: []`),
 * unknown dependencies and cycles reported. Returns the final steps in definition order.
 */
export const wireSteps = (
  ctx: Ctx,
  items: readonly StepItem[],
  type: 'chain' | 'graph',
): Step[] => {
  assignNames(ctx, items);
  const drafts = items.flatMap((it) => (it.kind === 'step' ? [it.draft] : it.drafts));
  const names = new Set(drafts.map((d) => d.step.name));
  const byId = new Map<string, string>();
  for (const d of drafts) {
    const id = d.step.id;
    if (id === undefined) continue;
    if (byId.has(id))
      ctx.report(
        [...d.path, 'id'],
        `duplicate step id ${JSON.stringify(id)}: step ids must be unique`,
      );
    else if (names.has(id) && d.step.name !== id)
      ctx.report(
        [...d.path, 'id'],
        `step id ${JSON.stringify(id)} is also the name of another step: choose a different id`,
      );
    byId.set(id, d.step.name);
  }

  for (const d of drafts) {
    d.step.depends = d.step.depends.map((dep, i) => {
      if (names.has(dep)) return dep;
      const viaId = byId.get(dep);
      if (viaId !== undefined) return viaId;
      if (dep.trim() !== '') {
        const hint = suggest(dep, [...names]);
        const at = d.dependsIsList ? [...d.path, 'depends', i] : [...d.path, 'depends'];
        ctx.report(
          at,
          `step ${JSON.stringify(d.step.name)} depends on unknown step ${JSON.stringify(dep)}${hint ? `: did you mean ${JSON.stringify(hint)}?` : ''}`,
        );
      }
      return dep;
    });
    if (d.step.depends.includes(d.step.name))
      ctx.report([...d.path, 'depends'], `step ${JSON.stringify(d.step.name)} depends on itself`);
  }

  if (type === 'chain') {
    let previous: string[] = [];
    for (const it of items) {
      const members = it.kind === 'step' ? [it.draft] : it.drafts;
      for (const d of members) {
        if (d.optOutOfChain) continue;
        const missing = previous.filter((p) => !d.step.depends.includes(p));
        if (missing.length > 0) d.step.depends = [...d.step.depends, ...missing];
      }
      previous = members.map((d) => d.step.name);
    }
  }

  reportCycles(ctx, drafts);
  return drafts.map((d) => d.step);
};

/** `"a" depends on "b", which depends on "a"`: a cycle in words, so the direction is plain. */
const describeCycle = (cycle: readonly string[]): string => {
  const [first = '', second = '', ...rest] = cycle.map((c) => JSON.stringify(c));
  return `${first} depends on ${second}${rest.map((c) => `, which depends on ${c}`).join('')}`;
};

/** Depth-first search; each cycle is reported once, naming its steps in order. */
const reportCycles = (ctx: Ctx, drafts: readonly DraftStep[]): void => {
  const byName = new Map(drafts.map((d) => [d.step.name, d]));
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (name: string): void => {
    state.set(name, 'visiting');
    stack.push(name);
    for (const dep of byName.get(name)?.step.depends ?? []) {
      if (!byName.has(dep) || dep === name) continue;
      const s = state.get(dep);
      if (s === 'visiting') {
        const cycle = [...stack.slice(stack.indexOf(dep)), dep];
        const d = byName.get(dep);
        ctx.report(
          d ? [...d.path, 'depends'] : [],
          `dependency cycle: ${describeCycle(cycle)}; remove one of these dependencies`,
        );
      } else if (s === undefined) visit(dep);
    }
    stack.pop();
    state.set(name, 'done');
  };
  for (const d of drafts) if (!state.has(d.step.name)) visit(d.step.name);
};
