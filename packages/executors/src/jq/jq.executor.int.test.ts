import { describe, expect, it } from 'vitest';
import { stepContext } from '../../test/support/exec-context.js';
import { JqExecutor } from './jq.executor.js';

const jq = new JqExecutor();
const DOC = JSON.stringify({
  items: [
    { name: 'a', x: 1, tags: ['red'] },
    { name: 'b', x: 2, tags: [] },
    { name: 'c', x: 3, tags: ['blue', 'red'] },
  ],
  title: 'héllo wörld',
});

const runJq = async (
  filter: string | undefined,
  config: Record<string, unknown> = {},
  input = DOC,
) => {
  const t = stepContext(
    {
      executor: Object.keys(config).length > 0 ? { type: 'jq', config } : 'jq',
      ...(filter !== undefined ? { command: filter } : {}),
      script: input,
    },
    '/tmp',
    { captureLimit: 1 << 20 },
  );
  const outcome = await jq.run(t.ctx);
  return { outcome, out: t.out.text, err: t.err.text };
};

describe('jq executor (jq-wasm, real jq 1.8)', () => {
  it('formats the JSON with a 4-space indent when there is no filter', async () => {
    const { outcome, out } = await runJq(undefined, {}, '{"a":[1,2]}');
    expect(outcome.exitCode).toBe(0);
    expect(out).toBe('{\n    "a": [\n        1,\n        2\n    ]\n}\n');
    expect(outcome.output).toBe(out);
  });

  it('applies select and map', async () => {
    const { outcome, out } = await runJq('[.items[] | select(.x > 1) | .name]');
    expect(outcome.exitCode).toBe(0);
    expect(JSON.parse(out)).toEqual(['b', 'c']);
    const sum = await runJq('.items | map(.x) | add');
    expect(sum.out).toBe('6\n');
  });

  it('turns objects into entries with to_entries', async () => {
    const { out } = await runJq('.items[0] | to_entries | map(.key)');
    expect(JSON.parse(out)).toEqual(['name', 'x', 'tags']);
  });

  it('encodes with @base64 and @csv, UTF-8 included', async () => {
    const b64 = await runJq('.title | @base64');
    expect(JSON.parse(b64.out)).toBe(Buffer.from('héllo wörld').toString('base64'));
    const csv = await runJq('.items[] | [.name, .x] | @csv', { raw: true });
    expect(csv.out).toBe('"a",1\n"b",2\n"c",3\n');
  });

  it('applies the other @ formats: @json, @sh, @uri, @html', async () => {
    const { out } = await runJq(
      '[(.items[0] | @json), (.items[0].name | @sh), ("a b&c" | @uri), ("<b>" | @html)] | .[]',
      { raw: true },
    );
    expect(out).toBe('{"name":"a","x":1,"tags":["red"]}\n\'a\'\na%20b%26c\n&lt;b&gt;\n');
  });

  it('prints strings unquoted with raw: true, one result per line', async () => {
    const { outcome, out } = await runJq('.items[].name', { raw: true });
    expect(outcome.exitCode).toBe(0);
    expect(out).toBe('a\nb\nc\n');
    const quoted = await runJq('.items[].name');
    expect(quoted.out).toBe('"a"\n"b"\n"c"\n');
  });

  it("fails a bad filter with jq's compile error (exit 3)", async () => {
    const { outcome, err } = await runJq('.items | map(');
    expect(outcome.exitCode).toBe(3);
    expect(outcome.error).toMatch(/^jq: error: syntax error/);
    expect(err).toContain('compile error');
  });

  it("fails a runtime error with jq's message (exit 5)", async () => {
    const { outcome } = await runJq('.title | .[0]');
    expect(outcome.exitCode).toBe(5);
    expect(outcome.error).toContain('Cannot index string with number');
  });

  it('fails input that is not JSON (after variable expansion) with the parse error', async () => {
    const t = stepContext({ executor: 'jq', command: '.', script: '${DATA}' }, '/tmp');
    // what the engine hands over once ${DATA} is expanded
    const outcome = await jq.run({ ...t.ctx, step: { ...t.ctx.step, script: '{"a": 1' } });
    expect(outcome.exitCode).not.toBe(0);
    expect(outcome.error).toContain('parse error');
  });

  it('stops a runaway filter by terminating its worker', async () => {
    const t = stepContext({ executor: 'jq', command: 'last(range(1e15))', script: '{}' }, '/tmp');
    const running = jq.run(t.ctx);
    t.stopper.abort();
    const outcome = await running;
    expect(outcome.exitCode).toBeNull();
    expect(outcome.signal).toBe('SIGTERM');
    const after = await runJq('.title');
    expect(after.out).toBe('"héllo wörld"\n'); // a fresh worker serves the next step
  });
});
