/*
 * The port by which the coordinator starts, watches and stops child runs for workers is the
 * services' (the process that holds the run service implements it): one contract, no copy.
 */
export type {
  WorkerChildStart as ChildStart,
  WorkerChildRunsPort as ChildRunsPort,
} from '@trellis/services';
