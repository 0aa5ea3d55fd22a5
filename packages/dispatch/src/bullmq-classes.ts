/*
 * BullMQ's classes, each imported from its own file. The package's index also loads its
 * PostgreSQL backend (about 400 KB of SQL and code) and its valkey-glide client, neither of
 * which Trellis uses (it reaches Redis through ioredis): about 1.2 MB of heap in every server
 * and worker process. The files are the ones the index loads, so the classes
 * are the same objects whichever way they were loaded.
 */
export { Queue } from 'bullmq/dist/cjs/classes/queue.js';
export { WaitingError } from 'bullmq/dist/cjs/classes/errors/waiting-error.js';
export { Worker } from 'bullmq/dist/cjs/classes/worker.js';
