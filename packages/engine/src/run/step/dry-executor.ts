import type { Executor } from '../../ports/executor.js';

/** `trellis dry`: every step succeeds and its log says what would have run. */
export const dryExecutor: Executor = {
  run: (ctx) => {
    const what =
      ctx.step.cmdWithArgs ??
      (ctx.step.script !== undefined ? `script:\n${ctx.step.script}` : ctx.step.executor.type);
    ctx.stdout.write(`[dry run] would run (${ctx.step.executor.type}, in ${ctx.cwd}): ${what}\n`);
    return Promise.resolve({
      exitCode: 0,
      signal: null,
      ...(ctx.captureLimit !== undefined ? { output: '' } : {}),
    });
  },
};
