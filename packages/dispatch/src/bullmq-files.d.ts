// The types of the BullMQ class files `bullmq-classes.ts` imports one by one (the package ships
// its types for its index only): each is the class the index exports.
declare module 'bullmq/dist/cjs/classes/worker.js' {
  export { Worker } from 'bullmq';
}
declare module 'bullmq/dist/cjs/classes/queue.js' {
  export { Queue } from 'bullmq';
}
declare module 'bullmq/dist/cjs/classes/errors/waiting-error.js' {
  export { WaitingError } from 'bullmq';
}
