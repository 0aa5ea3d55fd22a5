// Distributed mode: the BullMQ dispatcher (coordinator side) and the worker.
export { BullmqDispatcher, type BullmqDispatcherDeps } from './remote/bullmq-dispatcher.js';
export { DEFAULT_PREFIX, bullQueueName, jobIdOf, type RunJobData } from './remote/job-data.js';
export { createRedis } from './remote/redis-connection.js';
export { RedisFleet } from './remote/redis-fleet.js';
export { GrpcRecorder, type GrpcRecorderInit } from './worker/grpc-recorder.js';
export { Outbox, type OutboxDeps } from './worker/outbox.js';
export { outboxDirOf } from './worker/outbox-journal.js';
export { WorkerAgent, type WorkerAgentDeps } from './worker/worker-agent.js';
