import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** `proto/coordinator.proto` at the repository root, found from `src/` or `dist/`. */
const protoPath = (): string => {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'proto', 'coordinator.proto');
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new Error('proto/coordinator.proto not found above the coordinator package');
};

let cached: grpc.ServiceClientConstructor | undefined;

/** The `trellis.coordinator.v1.Coordinator` service, loaded once per process. */
export const coordinatorService = (): grpc.ServiceClientConstructor => {
  if (cached) return cached;
  const def = protoLoader.loadSync(protoPath(), {
    keepCase: false,
    longs: Number,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    trellis: { coordinator: { v1: { Coordinator: grpc.ServiceClientConstructor } } };
  };
  cached = pkg.trellis.coordinator.v1.Coordinator;
  return cached;
};
