export { freePort, startRedis, type PrivateRedis } from '@trellis/testkit';
export { parseDag, startCoordinatorSide, type CoordinatorSide } from './fleet.js';
export { spawnWorker, type WorkerProcess } from './worker-process.js';
