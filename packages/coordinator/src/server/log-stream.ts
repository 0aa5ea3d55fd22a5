import type { LogChunkSink } from './coordinator-deps.js';
import type * as grpc from '@grpc/grpc-js';
import type { LogAck, LogChunk } from '../wire/messages.js';
import { badArg } from './grpc-errors.js';
import { refOf } from './wire-refs.js';

/**
 * A worker's stream of log chunks (`StreamLogs`): applied one at a time, in arrival order;
 * answered with the size of every file written. A path outside the log directory (and the run's own `logDir`) ends it.
 */
export const receiveLogs = async (
  logs: LogChunkSink,
  call: grpc.ServerReadableStream<LogChunk, LogAck>,
): Promise<LogAck> => {
  const sizes = new Map<string, number>();
  for await (const raw of call) {
    const chunk = raw as LogChunk;
    if (!(await logs.accepts(chunk.path, refOf(chunk.run), refOf(chunk.root))))
      throw badArg(
        `log path ${JSON.stringify(chunk.path)} is outside the coordinator's log directory and the run's own logDir`,
      );
    sizes.set(chunk.path, await logs.apply(chunk.path, chunk.offset, chunk.data));
  }
  return { files: [...sizes].map(([path, size]) => ({ path, size })) };
};
