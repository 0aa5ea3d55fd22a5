import type { YamlPath } from '../yaml/problem.js';
import type { Step } from '../model/step.js';
import { makeSuggester, show, type Ctx, type Suggester } from './context.js';
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
        `duplicate step name ${show(d.step.name)}: step names must be unique`,
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
      ctx.report([...d.path, 'id'], `duplicate step id ${show(id)}: step ids must be unique`);
    else if (names.has(id) && d.step.name !== id)
      ctx.report(
        [...d.path, 'id'],
        `step id ${show(id)} is also the name of another step: choose a different id`,
      );
    byId.set(id, d.step.name);
  }

  // Built on the first unknown dependency, once for all of them (names x unknowns was quadratic).
  let hintFor: Suggester | undefined;
  for (const d of drafts) {
    d.step.depends = d.step.depends.map((dep, i) => {
      if (names.has(dep)) return dep;
      const viaId = byId.get(dep);
      if (viaId !== undefined) return viaId;
      if (dep.trim() !== '') {
        hintFor ??= makeSuggester([...names]);
        const hint = hintFor(dep);
        const at = d.dependsIsList ? [...d.path, 'depends', i] : [...d.path, 'depends'];
        ctx.report(
          at,
          `step ${show(d.step.name)} depends on unknown step ${show(dep)}${hint ? `: did you mean ${show(hint)}?` : ''}`,
        );
      }
      return dep;
    });
    if (d.step.depends.includes(d.step.name))
      ctx.report([...d.path, 'depends'], `step ${show(d.step.name)} depends on itself`);
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

/** Most steps a cycle message names; the rest are counted. */
export const MAX_CYCLE_NAMES = 10;

/**
 * `"a" depends on "b", which depends on "a"`: a cycle in words, so the direction is plain.
 * `named` are the cycle's first steps in order (at most {@link MAX_CYCLE_NAMES}), `length` the
 * number of steps in the whole cycle; a longer cycle ends in `... and N more`.
 */
const describeCycle = (named: readonly string[], length: number): string => {
  const [first = '', ...rest] = named.map(show);
  const more = length - named.length;
  const tail = more > 0 ? [`... and ${more} more`] : [first];
  return `${first} depends on ${[...rest, ...tail].join(', which depends on ')}`;
};

/** One step on the depth-first path, with the index of its next dependency to look at. */
interface Frame {
  readonly name: string;
  readonly depends: readonly string[];
  next: number;
}

/**
 * Depth-first search with an explicit stack (a chain of thousands of steps would overflow the
 * call stack); each cycle is reported once, at its first step, naming its steps in order.
 */
const reportCycles = (ctx: Ctx, drafts: readonly DraftStep[]): void => {
  const byName = new Map(drafts.map((d) => [d.step.name, d]));
  const done = new Set<string>();
  /** Steps on the current path -> their index in `frames` (the path, in order). */
  const onPath = new Map<string, number>();
  const frames: Frame[] = [];
  const enter = (name: string): void => {
    onPath.set(name, frames.length);
    frames.push({ name, depends: byName.get(name)?.step.depends ?? [], next: 0 });
  };
  for (const root of drafts) {
    if (done.has(root.step.name) || onPath.has(root.step.name)) continue;
    enter(root.step.name);
    for (let top = frames.at(-1); top; top = frames.at(-1)) {
      const dep = top.depends[top.next++];
      if (dep === undefined) {
        // Every dependency of `top` is explored: leave it.
        frames.pop();
        onPath.delete(top.name);
        done.add(top.name);
        continue;
      }
      if (!byName.has(dep) || dep === top.name || done.has(dep)) continue;
      const start = onPath.get(dep);
      if (start === undefined) {
        enter(dep);
        continue;
      }
      // Only the first steps are named, so a long cycle costs no more than a short one.
      const named = frames.slice(start, start + MAX_CYCLE_NAMES).map((f) => f.name);
      const d = byName.get(dep);
      ctx.report(
        d ? [...d.path, 'depends'] : [],
        `dependency cycle: ${describeCycle(named, frames.length - start)}; remove one of these dependencies`,
      );
    }
  }
};
