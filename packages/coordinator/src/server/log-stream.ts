import type { LogChunkSink } from './coordinator-deps.js';
import type * as grpc from '@grpc/grpc-js';
import type { LogAck, LogChunk } from '../wire/messages.js';
import { badArg } from './grpc-errors.js';
import { refOf } from './wire-refs.js';

/**
 * Applies one log chunk at its offset; undefined, nothing written, when its path is outside the
 * coordinator's log directory and the run's own `logDir`. The log's size after it otherwise.
 */
export const applyChunk = async (
  logs: LogChunkSink,
  chunk: LogChunk,
): Promise<number | undefined> => {
  if (!(await logs.accepts(chunk.path, refOf(chunk.run), refOf(chunk.root)))) return undefined;
  return logs.apply(chunk.path, chunk.offset, chunk.data);
};

/** Why a chunk's path is refused (`applyChunk` answered undefined). */
export const outsideLogDirs = (path: string): string =>
  `log path ${JSON.stringify(path)} is outside the coordinator's log directory and the run's own logDir`;

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
    const size = await applyChunk(logs, chunk);
    if (size === undefined) throw badArg(outsideLogDirs(chunk.path));
    sizes.set(chunk.path, size);
  }
  return { files: [...sizes].map(([path, size]) => ({ path, size })) };
};
