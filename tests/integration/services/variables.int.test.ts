import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunStatus } from '@trellis/core';
import { createTempHome, localRunService, type TempHome } from '../support/local-run-service.js';

/*
 * Issue #16: DAG files users already have run as they expect. Real DAG files, the file store,
 * the local dispatcher and /bin/sh.
 */

let t: TempHome;
beforeEach(() => {
  t = createTempHome('trellis-vars-');
});
afterEach(() => t.cleanup());

describe('parallel object items reach the child DAG as named params', () => {
  it('deploys each item with its own REGION and VERSION, not the child defaults', async () => {
    t.dag(
      'release',
      `steps:
  - name: deploy
    run: deploy-one
    parallel:
      items:
        - {REGION: us-west-2, VERSION: 1.0.1}
        - {REGION: eu-west-1, VERSION: 1.0.2}
        - {REGION: ap-south-1, VERSION: 1.0.3}
`,
    );
    t.dag(
      'deploy-one',
      `params:
  - REGION: us-east-1
  - VERSION: 1.0.0
steps:
  - name: deploy
    command: echo "Deploying version \${VERSION} to region \${REGION}"
    output: SAID
`,
    );
    const { runs } = localRunService(t);
    const final = await (await runs.start({ dag: 'release' })).done;
    expect(final.status).toBe(RunStatus.Succeeded);
    const agg = JSON.parse(readFileSync(final.nodes[0]?.stdout ?? '', 'utf8')) as {
      outputs: { SAID: string }[];
    };
    expect(agg.outputs.map((o) => o.SAID).sort()).toEqual([
      'Deploying version 1.0.1 to region us-west-2',
      'Deploying version 1.0.2 to region eu-west-1',
      'Deploying version 1.0.3 to region ap-south-1',
    ]);
  });
});

describe("a child DAG's params are the parent's values, byte for byte", () => {
  it('passes an output with quotes, $ and backticks to the child without running or expanding it', async () => {
    const pwned = join(t.home, 'pwned');
    const value = `say "hi" $HOME \`touch ${pwned}\``;
    writeFileSync(join(t.home, 'v.in'), value);
    writeFileSync(join(t.home, 'list.in'), JSON.stringify([{ MSG: `${value}!` }]));
    t.dag(
      'parent',
      `steps:
  - {name: make, command: "cat ${join(t.home, 'v.in')}", output: V}
  - {name: list, command: "cat ${join(t.home, 'list.in')}", output: LIST}
  - {name: call, run: child, params: "MSG=\${V}"}
  - {name: fan, run: child, parallel: "\${LIST}"}
`,
    );
    t.dag(
      'child',
      `params: [MSG: none]\nsteps:\n  - command: printf '%s' "\${MSG}" >> ${join(t.home, 'msg.out')}\n`,
    );
    const { runs } = localRunService(t);
    const final = await (await runs.start({ dag: 'parent' })).done;
    expect(final.status).toBe(RunStatus.Succeeded);
    expect(readFileSync(join(t.home, 'msg.out'), 'utf8')).toBe(`${value}${value}!`);
    expect(existsSync(pwned)).toBe(false);
  });
});

describe('values reach the shell byte for byte', () => {
  /** Values no pasting survives; written to files so that only the shell reads them. */
  const values = (): Record<string, string> => ({
    json: '{"total": 2}',
    spaces: 'a  b   c',
    dollar: 'cost $HOME ${PATH} $(id) \\$x',
    ticks: 'run `id` now',
    lines: 'one\n"two"\nthree',
    single: "it's 'x'",
    inject: `"; touch ${join(t.home, 'pwned')}; "`,
    injectsq: `'; touch ${join(t.home, 'pwned')}; '`,
  });

  it('passes outputs with quotes, spaces, $, backticks, line breaks and injections unchanged', async () => {
    const v = values();
    const names = Object.keys(v);
    for (const name of names) writeFileSync(join(t.home, `${name}.in`), v[name] ?? '');
    const produce = names.map(
      (n) => `  - {name: make-${n}, command: "cat ${join(t.home, `${n}.in`)}", output: V_${n}}`,
    );
    const consume = names.map(
      (n) =>
        `  - name: use-${n}\n    command: printf '%s|%s' "\${V_${n}}" 'sq \${V_${n}}' > ${join(t.home, `${n}.out`)}`,
    );
    t.dag(
      'values',
      `type: graph
steps:
${produce.join('\n')}
${consume.map((c, i) => `${c}\n    depends: [make-${names[i] ?? ''}]`).join('\n')}
  - name: grep-json
    depends: [make-json]
    command: 'echo "\${V_json}" | grep -q ''"total": 2'''
`,
    );
    const { runs } = localRunService(t);
    const final = await (await runs.start({ dag: 'values' })).done;
    expect(final.nodes.filter((n) => n.error !== '').map((n) => n.error)).toEqual([]);
    expect(final.status).toBe(RunStatus.Succeeded);
    for (const name of names) {
      const got = readFileSync(join(t.home, `${name}.out`), 'utf8');
      expect(got, name).toBe(`${v[name] ?? ''}|sq ${v[name] ?? ''}`);
    }
    expect(existsSync(join(t.home, 'pwned'))).toBe(false);
  });

  it('passes a start param with quotes and spaces, and never runs an injected one', async () => {
    const pwned = join(t.home, 'pwned');
    t.dag(
      'greet',
      `params: [MSG: x, EVIL: y]
steps:
  - command: printf '%s' "\${MSG}" > ${join(t.home, 'msg.out')}
  - command: echo \${EVIL} "\${EVIL}" '\${EVIL}'
`,
    );
    const { runs } = localRunService(t);
    const params = JSON.stringify({ MSG: 'say "hi"  twice', EVIL: `"; touch ${pwned}; "` });
    const final = await (await runs.start({ dag: 'greet', params })).done;
    expect(final.status).toBe(RunStatus.Succeeded);
    expect(readFileSync(join(t.home, 'msg.out'), 'utf8')).toBe('say "hi"  twice');
    expect(existsSync(pwned)).toBe(false);
  });
});
