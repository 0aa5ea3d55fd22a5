import { describe, expect, it } from 'vitest';
import { statusesOf, toGraphInput } from './graph-input';
import { layoutGraph } from './graph-layout';

const step = (name: string, depends: string[] = [], run = '') => ({ name, depends, run });

describe('toGraphInput', () => {
  it('draws one vertex per step in order and one edge per dependency', () => {
    const g = toGraphInput([step('a'), step('b', ['a']), step('c', ['a', 'b'])]);
    expect(g.vertices.map((v) => v.id)).toEqual(['a', 'b', 'c']);
    expect(g.edges).toEqual([
      { from: 'a', to: 'b' },
      { from: 'a', to: 'c' },
      { from: 'b', to: 'c' },
    ]);
    expect(g.dangling).toEqual([]);
  });

  it('draws a repeated dependency once and reports unknown and self dependencies', () => {
    const g = toGraphInput([step('a'), step('b', ['a', 'a', 'ghost', 'b'])]);
    expect(g.edges).toEqual([{ from: 'a', to: 'b' }]);
    expect(g.dangling).toEqual(['b -> ghost', 'b -> b']);
  });

  it('colours vertices with the run statuses and marks child-DAG steps', () => {
    const statuses = statusesOf([
      { step: { name: 'a' }, status: 4 },
      { step: { name: 'b' }, status: 1 },
    ]);
    const g = toGraphInput([step('a'), step('b', ['a'], 'child-dag'), step('c', ['b'])], statuses);
    expect(g.vertices.map((v) => [v.id, v.status, v.child])).toEqual([
      ['a', 4, false],
      ['b', 1, true],
      ['c', undefined, false],
    ]);
  });
});

describe('layoutGraph', () => {
  it('places dependencies before their dependants left to right, inside the drawing', () => {
    const layout = layoutGraph(toGraphInput([step('a'), step('b', ['a']), step('c', ['b'])]));
    const x = new Map(layout.vertices.map((v) => [v.id, v.x]));
    expect(x.get('a')!).toBeLessThan(x.get('b')!);
    expect(x.get('b')!).toBeLessThan(x.get('c')!);
    for (const v of layout.vertices) {
      expect(v.x - v.width / 2).toBeGreaterThanOrEqual(0);
      expect(v.x + v.width / 2).toBeLessThanOrEqual(layout.width);
    }
    expect(layout.edges).toHaveLength(2);
    expect(layout.edges[0]!.points.length).toBeGreaterThanOrEqual(2);
  });

  it('lays out 300 steps of a wide fan-in', () => {
    const steps = Array.from({ length: 299 }, (_, i) => step(`s${i}`));
    steps.push(
      step(
        'join',
        steps.map((s) => s.name),
      ),
    );
    const layout = layoutGraph(toGraphInput(steps));
    expect(layout.vertices).toHaveLength(300);
    expect(layout.edges).toHaveLength(299);
  });
});
