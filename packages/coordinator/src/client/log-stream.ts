import type * as grpc from '@grpc/grpc-js';
import type { LogAck, LogChunk } from '../wire/messages.js';

/** A client stream of log chunks (`CoordinatorClient.openLogs`). */
export interface LogStream {
  /** Sends a chunk at once (the coordinator applies each as it comes). */
  write(chunk: LogChunk): void;
  /** Ends the stream: the files' new sizes once the coordinator applied every chunk. */
  end(): Promise<LogAck>;
}

/** The `StreamLogs` call `open` makes (given its answer's callback), as a {@link LogStream}. */
export const logStreamOf = (
  open: (
    cb: (e: grpc.ServiceError | null, res: LogAck) => void,
  ) => grpc.ClientWritableStream<LogChunk>,
): LogStream => {
  let settle: (e: grpc.ServiceError | null, res: LogAck) => void = () => undefined;
  const answer = new Promise<LogAck>((resolve, reject) => {
    settle = (e, res) => (e ? reject(e) : resolve(res));
  });
  answer.catch(() => undefined); // returned by `end`, which may come after a failure
  const stream = open((e, res) => settle(e, res));
  stream.on('error', () => undefined); // reported through the callback
  return {
    write: (c) => void stream.write(c),
    end: () => {
      stream.end();
      return answer;
    },
  };
};
