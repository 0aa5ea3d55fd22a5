// The local side (no BullMQ, no gRPC: loaded in every process). The remote side is
// `@trellis/dispatch/remote`, loaded only in distributed mode.
export { RunHost, type HostedRun, type RunHostDeps, type RunningRun } from './host/run-host.js';
export {
  LocalDispatcher,
  createLocalDispatcher,
  type LocalDispatcherDeps,
  type LocalLaunch,
} from './local/local-dispatcher.js';
export { dryRecorder } from './local/dry-recorder.js';
