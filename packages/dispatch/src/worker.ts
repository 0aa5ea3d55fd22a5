// What a `trellis worker` process runs: the worker agent, its Redis connection and outbox (the
// `@trellis/dispatch/worker` entry). Not the coordinator side (`./remote`), whose BullMQ
// dispatcher and shared fleet a worker never uses (docs/decisions.md, "A lean idle fleet").
export { createRedis } from './remote/redis-connection.js';
export { outboxDirOf } from './worker/outbox-journal.js';
export { WorkerAgent, type WorkerAgentDeps } from './worker/worker-agent.js';
