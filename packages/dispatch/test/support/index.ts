export { freePort, startRedis, type PrivateRedis } from './redis-server.js';
export { parseDag, startCoordinatorSide, type CoordinatorSide } from './fleet.js';
export { spawnWorker, type WorkerProcess } from './worker-process.js';
