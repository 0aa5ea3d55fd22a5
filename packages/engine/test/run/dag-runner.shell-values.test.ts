import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { NodeStatus } from '@trellis/core';
import { harness } from '../support/harness.js';

const JSON_OUT = '{"total": 2}';

describe('values in shell commands (issue #16)', () => {
  it('leaves a value with quotes for the shell to expand from the step environment', async () => {
    const h = harness(
      `steps:
  - {name: a, command: x, output: RESULTS}
  - {name: b, command: "echo \\"\${RESULTS}\\" | grep -q '\\"total\\": 2'"}
`,
      { a: { output: JSON_OUT } },
    );
    await h.run();
    const b = h.executor.calls[1];
    expect(b?.step.cmdWithArgs).toBe(`echo "\${RESULTS}" | grep -q '"total": 2'`);
    expect(b?.env.RESULTS).toBe(JSON_OUT);
  });

  it('passes params, JSON paths and ${ITEM} that need it through SVC_VALUE_n variables', async () => {
    const h = harness(
      `params: ['a b', 'J={"k":"v w"}']
steps:
  - {name: a, command: "printf %s \\"$1\\" 'k: \${J.k}' \\"\${ITEM}\\"", parallel: ['x;y']}
`,
    );
    await h.run();
    const a = h.executor.calls[0];
    expect(a?.step.cmdWithArgs).toBe(
      `printf %s "\${SVC_VALUE_1}" 'k: '"\${SVC_VALUE_2}"'' "\${ITEM}"`,
    );
    expect(a?.env).toMatchObject({ SVC_VALUE_1: 'a b', SVC_VALUE_2: 'v w', ITEM: 'x;y' });
  });

  it('treats a script run by a shell the same way, and writes values into a Python script', async () => {
    const h = harness(
      `params: ['V=it''s "x"']
steps:
  - {name: sh, script: "echo \\"\${V}\\""}
  - {name: py, script: "#!/usr/bin/env python3\\nprint('v=\${V}')"}
`,
    );
    await h.run();
    expect(h.executor.calls[0]?.step.script).toBe('echo "${V}"');
    expect(h.executor.calls[1]?.step.script).toBe(`#!/usr/bin/env python3\nprint('v=it's "x"')`);
  });

  it('writes values into the text of other executors (http, jq)', async () => {
    const h = harness(
      `params: ['Q=a "b"']
steps:
  - {name: h, executor: http, command: "GET http://localhost/?q=\${Q}"}
  - {name: j, executor: jq, command: ".[\\"\${Q}\\"]", script: "{}"}
`,
    );
    await h.run();
    expect(h.executor.calls[0]?.step.cmdWithArgs).toBe('GET http://localhost/?q=a "b"');
    expect(h.executor.calls[1]?.step.cmdWithArgs).toBe('.["a "b""]');
  });

  it('sets values for the remote shell of an ssh step in front of its command', async () => {
    const h = harness(
      `params: ['V=it''s "x" 5$']\nsteps:\n  - {name: r, executor: {type: ssh, config: {host: h, user: u}}, command: "printf %s \\"\${V}\\" ok"}\n`,
    );
    await h.run();
    const text = h.executor.calls[0]?.step.cmdWithArgs ?? '';
    expect(text).toBe(`SVC_VALUE_1='it'\\''s "x" 5$'\nprintf %s "\${SVC_VALUE_1}" ok`);
    expect(execFileSync('sh', ['-c', text], { encoding: 'utf8', env: {} })).toBe('it\'s "x" 5$ok');
  });

  it("leaves a docker script's values to the container shell, and writes them into its arguments", async () => {
    const h = harness(
      `params: ['V=a "b"']
steps:
  - {name: s, executor: {type: docker, config: {image: alpine}}, script: "echo \\"\${V}\\""}
  - {name: c, executor: {type: docker, config: {image: alpine}}, command: "echo \${V}"}
`,
    );
    await h.run();
    expect(h.executor.calls[0]?.step.script).toBe('echo "${V}"');
    expect(h.executor.calls[0]?.env.V).toBe('a "b"');
    expect(h.executor.calls[1]?.step.args).toEqual(['a "b"']);
  });

  it('keeps the old text for a shell that is not POSIX', async () => {
    const h = harness(
      `params: ['V=a "b"']\nsteps:\n  - {name: f, shell: fish, command: "echo \${V}"}\n`,
    );
    await h.run();
    expect(h.executor.calls[0]?.step.cmdWithArgs).toBe('echo a "b"');
  });

  it('passes values as values to precondition commands and backtick commands', async () => {
    const h = harness(
      `params: ['V=x; touch /tmp/pwned']
steps:
  - name: a
    command: x
    preconditions: ['test -n "\${V}"']
    env: [E: "\`echo \${V}\`"]
`,
      {},
      { commands: (c) => ({ exitCode: 0, stdout: c.startsWith('echo') ? 'ok\n' : '' }) },
    );
    await h.run();
    expect(h.commands.commands).toEqual(['echo ${SVC_VALUE_1}', 'test -n "${V}"']);
    expect(h.commands.envs[0]?.SVC_VALUE_1).toBe('x; touch /tmp/pwned');
    expect(h.commands.envs[1]?.V).toBe('x; touch /tmp/pwned');
  });

  it('fails the step, saying why, when a value would end a quoted here-document', async () => {
    const h = harness(
      `params: ['V=EOF']\nsteps:\n  - {name: a, script: "cat <<'EOF'\\n\${V}\\nEOF\\n"}\n`,
    );
    const r = await h.run();
    expect(h.executor.calls).toHaveLength(0);
    expect(r.nodes[0]?.status).toBe(NodeStatus.Failed);
    expect(r.nodes[0]?.error).toMatch(/would end it early/);
  });
});
