import { ExitCode, type CliIo } from '../io.js';
import type { Command } from './command.js';
import { parseCommandArgs } from './common.js';
import type { FlagSpecs } from './flags.js';

const OPTIONS = {
  host: {
    type: 'string',
    short: 's',
    value: '<host>',
    description: 'the address to listen on (default server.host, 127.0.0.1)',
    example: 'trellis server --host 0.0.0.0',
  },
  port: {
    type: 'string',
    short: 'p',
    value: '<port>',
    description: 'the HTTP port (default server.port, 8080; 0 picks a free one)',
    example: 'trellis start-all --port 8081',
  },
  'coordinator-port': {
    type: 'string',
    value: '<port>',
    description: 'with Redis: the gRPC port of the coordinator (default 50055)',
    example: 'trellis start-all --redis-url redis://127.0.0.1:6379 --coordinator-port 50055',
  },
  'redis-url': {
    type: 'string',
    value: '<url>',
    description: 'Redis for distributed mode (default $SVC_REDIS_URL, redis.url)',
    example: 'trellis start-all --redis-url redis://127.0.0.1:6379',
  },
} as const satisfies FlagSpecs;

const make = (name: 'server' | 'start-all', summary: string, withScheduler: boolean): Command => {
  const usage = `trellis ${name} [--host <h>] [--port <p>] [--redis-url <url>] [--coordinator-port <p>] [--dags <dir>] [--home <dir>] [--config <file>]`;
  return {
    name,
    summary,
    usage,
    options: OPTIONS,
    run: async (args: readonly string[], io: CliIo): Promise<ExitCode> => {
      const { values, positionals } = parseCommandArgs(args, OPTIONS);
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
