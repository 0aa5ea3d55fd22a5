import { describe, expect, it } from 'vitest';
import { parseDagFile } from '../load-dag-file.js';

/** A DAG file of `n` steps `s0`..`s{n-1}`; `depends(i)` gives step i's dependencies. */
const dagOf = (type: 'chain' | 'graph', n: number, depends: (i: number) => string[]): string =>
  [
    `name: big`,
    `type: ${type}`,
    'steps:',
    ...Array.from({ length: n }, (_, i) => {
      const deps = depends(i);
      return `  - name: s${i}\n    command: echo ${i}${deps.length > 0 ? `\n    depends: [${deps.join(', ')}]` : ''}`;
    }),
  ].join('\n');

const parse = (text: string) => parseDagFile(text, { location: '/dags/big.yaml', cwd: '/' });

describe('dependency cycles', () => {
  it('accepts a 10,000-step chain searched from its deep end without overflowing the stack', () => {
    // s0 waits for s1, which waits for s2, ...: the search from s0 goes 10,000 steps deep.
    const r = parse(dagOf('graph', 10_000, (i) => (i < 9_999 ? [`s${i + 1}`] : [])));
    expect(r.errors).toEqual([]);
    expect(r.main.dag.steps[0]?.depends).toEqual(['s1']);
  });

  it('accepts a 10,000-step chain of type chain', () => {
    const r = parse(dagOf('chain', 10_000, () => []));
    expect(r.errors).toEqual([]);
    expect(r.main.dag.steps[9_999]?.depends).toEqual(['s9998']);
  });

  it('reports the one back edge of a 10,000-step graph, naming at most 10 steps', () => {
    const r = parse(dagOf('graph', 10_000, (i) => [`s${i === 0 ? 9_999 : i - 1}`]));
    expect(r.errors).toEqual([
      'line 6: steps[0].depends: dependency cycle: "s0" depends on "s9999", which depends on "s9998", which depends on "s9997", which depends on "s9996", which depends on "s9995", which depends on "s9994", which depends on "s9993", which depends on "s9992", which depends on "s9991", which depends on ... and 9990 more; remove one of these dependencies',
    ]);
  });

  it('names every step of a cycle of 10 steps and closes it', () => {
    const r = parse(dagOf('graph', 10, (i) => [`s${(i + 1) % 10}`]));
    expect(r.errors).toEqual([
      'line 6: steps[0].depends: dependency cycle: "s0" depends on "s1", which depends on "s2", which depends on "s3", which depends on "s4", which depends on "s5", which depends on "s6", which depends on "s7", which depends on "s8", which depends on "s9", which depends on "s0"; remove one of these dependencies',
    ]);
  });

  it('keeps a 2,000-step cycle message short', () => {
    const r = parse(dagOf('graph', 2_000, (i) => [`s${(i + 1) % 2_000}`]));
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatch(/which depends on "s9", which depends on \.\.\. and 1990 more;/);
    expect(r.errors[0]?.length).toBeLessThan(400);
  });
});

describe('unknown dependencies', () => {
  it('reports each of 10,000 unknown dependencies, with no hint among so many steps', () => {
    const r = parse(dagOf('graph', 10_000, (i) => [`missing-${i}`]));
    expect(r.errors).toHaveLength(10_000);
    expect(r.errors[1_234]).toBe(
      'line 3708: steps[1234].depends[0]: step "s1234" depends on unknown step "missing-1234"',
    );
  });

  it('quotes long step names shortened', () => {
    const long = 'n'.repeat(100);
    const r = parse(
      `type: graph\nsteps:\n  - name: ${long}\n    command: echo\n    depends: ${long}x\n  - name: ${long}\n    command: echo\n`,
    );
    const short = `"${'n'.repeat(57)}..."`;
    expect(r.errors).toEqual([
      `line 5: steps[0].depends: step ${short} depends on unknown step ${short}`,
      `line 6: steps[1].name: duplicate step name ${short}: step names must be unique`,
    ]);
  });
});
