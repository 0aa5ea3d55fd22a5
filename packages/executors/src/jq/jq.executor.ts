import type { ExecContext, ExecutionOutcome, Executor } from '@trellis/engine';
import { emitOutput, failed, writeText } from '../common/outcome.js';
import { JqPool } from './jq-pool.js';

/** The jq executor's config as the spec package compiles it. */
interface JqConfig {
  /** Strings unquoted, like `jq --raw-output`. @default false */
  readonly raw?: boolean;
}

/**
 * `executor: jq` (spec: Executors): `script` is the JSON input, `command` the filter; no filter
 * formats the JSON (`.`). The real jq C code (jq-wasm, jq 1.8) runs in pooled worker threads, so
 * a stop ends even a runaway filter (its worker is terminated). Each result is printed with a
 * 4-space indent (as the peer does), strings unquoted with `raw: true`. A bad filter or input fails the step
 * with jq's own message and exit code (3 compile error, 5 runtime or parse error).
 */
export class JqExecutor implements Executor {
  constructor(private readonly pool: JqPool = new JqPool()) {}

  async run(ctx: ExecContext): Promise<ExecutionOutcome> {
    const { step } = ctx;
    const input = step.script;
    if (input === undefined)
      return failed('jq step needs script: the JSON input (command holds the filter)');
    const filter = (step.cmdWithArgs ?? step.command ?? '').trim() || '.';
    const config = step.executor.config as JqConfig;
    const flags = config.raw === true ? ['-r'] : ['--indent', '4'];
    if (ctx.stop.abort.aborted) return failed('the step was stopped before it started');

    const reply = await this.pool.run({ input, filter, flags }, ctx.stop.abort);
    if (reply === 'stopped') return { exitCode: null, signal: ctx.stop.signal };
    if ('crash' in reply) return failed(`jq could not run: ${reply.crash}`);
    if (reply.stderr) await writeText(ctx.stderr, `${reply.stderr}\n`);
    const out = await emitOutput(ctx, reply.stdout === '' ? '' : `${reply.stdout}\n`);
    if (reply.exitCode !== 0) {
      const message = reply.stderr.trim().split('\n')[0] ?? '';
      return { ...failed(message || `jq exited with ${reply.exitCode}`, reply.exitCode), ...out };
    }
    return { exitCode: 0, signal: null, ...out };
  }
}
