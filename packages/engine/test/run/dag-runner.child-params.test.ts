import { describe, expect, it } from 'vitest';
import { NodeStatus, RunStatus } from '@trellis/core';
import { tokenizeParams } from '@trellis/spec';
import { resolveRunParams } from '@trellis/engine';
import { makeRunRecord } from '@trellis/testkit';
import { childRunner, dagOf, harness } from '../support/harness.js';

/** The params a child receives, as the child reads them (the `KEY="value"` form). */
const paramsOf = (text: string): Record<string, string> =>
  Object.fromEntries(tokenizeParams(text).map((t, i) => [t.name ?? String(i + 1), t.value]));

const DEPLOY = `steps:
  - name: deploy
    run: deploy-one
    parallel:
      items:
        - {REGION: us-west-2, VERSION: 1.0.1}
        - {REGION: eu-west-1, VERSION: 1.0.2}
        - {REGION: "ap south", VERSION: 'say "hi" $HOME \`id\`'}
`;

describe('parallel object items and child params', () => {
  it("makes each object item's keys the child's named params", async () => {
    const children = childRunner(RunStatus.Succeeded);
    const r = await harness(DEPLOY, {}, { children }).run();
    expect(r.nodes[0]?.status).toBe(NodeStatus.Succeeded);
    const got = children.requests.map((q) => paramsOf(q.params));
    expect(got).toEqual([
      { REGION: 'us-west-2', VERSION: '1.0.1' },
      { REGION: 'eu-west-1', VERSION: '1.0.2' },
      { REGION: 'ap south', VERSION: 'say "hi" $HOME `id`' },
    ]);
    expect(new Set(children.requests.map((q) => q.dagRunId)).size).toBe(3);
  });

  it('gives the child numbers and booleans as text, and keeps ${ITEM} the whole item as JSON', async () => {
    const children = childRunner(RunStatus.Succeeded);
    const h = harness(
      `steps:
  - name: fan
    run: sub
    params: WHOLE=\${ITEM} ONE=\${ITEM.N}
    parallel: [{N: 7, ON: true}]
`,
      {},
      { children },
    );
    await h.run();
    expect(paramsOf(children.requests[0]?.params ?? '')).toEqual({
      N: '7',
      ON: 'true',
      WHOLE: '{"N":7,"ON":true}',
      ONE: '7',
    });
  });

  it("lets the step's own params win over an item key of the same name", async () => {
    const children = childRunner(RunStatus.Succeeded);
    const h = harness(
      'steps:\n  - {name: fan, run: sub, params: "REGION=fixed EXTRA=1", parallel: [{REGION: a, VERSION: v}]}\n',
      {},
      { children },
    );
    await h.run();
    const tokens = tokenizeParams(children.requests[0]?.params ?? '');
    // The child applies the tokens in order: the step's REGION comes last and wins.
    expect(tokens.at(-2)).toEqual({ name: 'REGION', value: 'fixed' });
    expect(paramsOf(children.requests[0]?.params ?? '')).toEqual({
      REGION: 'fixed',
      VERSION: 'v',
      EXTRA: '1',
    });
  });

  it('reads object items of a ${VAR} list the same way', async () => {
    const children = childRunner(RunStatus.Succeeded);
    const h = harness(
      `params:\n  - 'TARGETS=[{"REGION":"r1"},{"REGION":"r2"}]'\nsteps:\n  - {name: fan, run: sub, parallel: "\${TARGETS}"}\n`,
      {},
      { children },
    );
    await h.run();
    expect(children.requests.map((q) => paramsOf(q.params))).toEqual([
      { REGION: 'r1' },
      { REGION: 'r2' },
    ]);
  });

  it('fails the step, naming the key, when an item key cannot be a parameter name', async () => {
    const children = childRunner(RunStatus.Succeeded);
    const h = harness(
      'steps:\n  - {name: fan, run: sub, parallel: [{"my-region": a}]}\n',
      {},
      { children },
    );
    const r = await h.run();
    expect(children.requests).toHaveLength(0);
    expect(r.nodes[0]?.status).toBe(NodeStatus.Failed);
    expect(r.nodes[0]?.error).toContain('"my-region"');
  });

  it("keeps each value of the step's params one value, whatever ${ITEM} holds", async () => {
    const children = childRunner(RunStatus.Succeeded);
    const h = harness(
      `steps:
  - name: fan
    run: sub
    params: FILE=\${ITEM} "pos \${ITEM}" K=plain
    parallel: ['a "b"  c\\d', 'x=y']
`,
      {},
      { children },
    );
    await h.run();
    expect(children.requests.map((q) => tokenizeParams(q.params))).toEqual([
      [
        { name: 'FILE', value: 'a "b"  c\\d' },
        { value: 'pos a "b"  c\\d' },
        { name: 'K', value: 'plain' },
      ],
      [{ name: 'FILE', value: 'x=y' }, { value: 'pos x=y' }, { name: 'K', value: 'plain' }],
    ]);
    expect(children.requests[1]?.params).toBe('FILE=x=y "pos x=y" K=plain');
  });

  it('still passes a text item as the child params', async () => {
    const children = childRunner(RunStatus.Succeeded);
    await harness(
      'steps:\n  - {name: fan, run: sub, parallel: [a, "K=v"]}\n',
      {},
      { children },
    ).run();
    expect(children.requests.map((q) => q.params)).toEqual(['a', 'K=v']);
  });
});

describe("a child's params are final", () => {
  const CHILD = 'params: [A: "`echo default`", B: b]\nsteps:\n  - {name: s, command: x}\n';

  it('marks the values a parent gives as literal, and keeps the defaults to evaluate', () => {
    expect(resolveRunParams(dagOf(CHILD), 'B="`touch /tmp/pwned` $HOME"', false)).toEqual([
      { name: 'A', value: '`echo default`' },
      { name: 'B', value: '`touch /tmp/pwned` $HOME', literal: true },
    ]);
    expect(resolveRunParams(dagOf(CHILD), '{"B":"x"}')).toEqual([
      { name: 'A', value: '`echo default`' },
      { name: 'B', value: 'x' },
    ]);
  });

  it('does not evaluate a literal value again at start: no backtick runs, no $ expands', async () => {
    const h = harness(CHILD, {}, { commands: () => ({ exitCode: 0, stdout: 'ran\n' }) });
    const record = makeRunRecord(dagOf(CHILD));
    record.params = [
      { name: 'A', value: '`echo default`' },
      { name: 'B', value: '`touch /tmp/pwned` $HOME', literal: true },
    ];
    await h.run({ record });
    expect(h.commands.commands).toEqual(['echo default']);
    expect(h.executor.calls[0]?.env).toMatchObject({ A: 'ran', B: '`touch /tmp/pwned` $HOME' });
  });
});
