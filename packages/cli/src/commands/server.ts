import { ExitCode, type CliIo } from '../io.js';
import type { Command } from './command.js';
import { parseCommandArgs } from './common.js';

const OPTIONS = {
  host: { type: 'string', short: 's' },
  port: { type: 'string', short: 'p' },
  'coordinator-port': { type: 'string' },
  'redis-url': { type: 'string' },
} as const;

const make = (name: 'server' | 'start-all', summary: string, withScheduler: boolean): Command => {
  const usage = `trellis ${name} [--host <h>] [--port <p>] [--redis-url <url>] [--coordinator-port <p>] [--dags <dir>] [--home <dir>] [--config <file>]`;
  return {
    name,
    summary,
    usage,
    run: async (args: readonly string[], io: CliIo): Promise<ExitCode> => {
      const { values, positionals } = parseCommandArgs(args, OPTIONS);
      if (values.help) {
        io.out(`usage: ${usage}`);
        return ExitCode.Ok;
      }
      if (positionals.length > 0) {
        io.err(
          `trellis ${name}: unexpected argument ${JSON.stringify(positionals[0])}\nusage: ${usage}`,
        );
        return ExitCode.Usage;
      }
      const { serve } = await import('../wiring/serve.js'); // loads the API only when serving
      return serve(
        io,
        {
          home: values.home,
          config: values.config,
          dags: values.dags,
          host: values.host,
          port: values.port,
          coordinatorPort: values['coordinator-port'],
          redisUrl: values['redis-url'],
        },
        { withScheduler },
      );
    },
  };
};

/** `trellis server`: the REST API; runs started through it execute in this process. */
export const serverCommand = make(
  'server',
  'serve the REST API (runs execute in this process)',
  false,
);

/** `trellis start-all`: API, scheduler and local execution in one process (the embedded default). */
export const startAllCommand = make(
  'start-all',
  'API, scheduler and local execution in one process',
  true,
);
