import * as grpc from '@grpc/grpc-js';
import { coordinatorService } from '../proto/load-proto.js';
import { guardHandlers, type WorkerAuth } from '../auth/worker-auth.js';
import { serverCredentials, type TlsFiles } from './credentials.js';
import { serviceHandlers, type HeartbeatStream, type ServiceRooms } from './grpc-service.js';

/** Where the server listens. */
export interface ListenOptions {
  readonly host: string;
  readonly port: number;
  readonly tls?: TlsFiles | undefined;
  /** Checks every call's protocol version and token. */
  readonly auth: WorkerAuth;
}

/** The coordinator's gRPC server: binds the service and shuts it down. */
export class CoordinatorServer {
  /** Open heartbeat streams (ended on close, so the server can shut down). */
  readonly #beatStreams = new Set<HeartbeatStream>();
  #server: grpc.Server | undefined;
  #port = 0;

  /** The port the server listens on (after `listen`). */
  get port(): number {
    return this.#port;
  }

  /** Serves the rooms on `host:port`; resolves once bound. */
  async listen(rooms: ServiceRooms, at: ListenOptions): Promise<void> {
    const server = new grpc.Server({
      'grpc.max_receive_message_length': 64 * 1024 * 1024,
      // Channelz bookkeeping costs CPU on every call; 1,000 workers beat every second.
      'grpc.enable_channelz': 0,
    });
    server.addService(
      coordinatorService().service,
      guardHandlers(serviceHandlers(rooms, this.#beatStreams), at.auth),
    );
    this.#port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`${at.host}:${at.port}`, serverCredentials(at.tls), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    this.#server = server;
  }

  /** Ends the heartbeat streams and shuts the server down. */
  async close(): Promise<void> {
    for (const s of this.#beatStreams) s.end(); // workers open a new one to the next coordinator
    this.#beatStreams.clear();
    const server = this.#server;
    if (server) {
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      server.forceShutdown();
    }
  }
}
