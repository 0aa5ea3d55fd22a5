export { FakeClock, flushMicrotasks } from './fake-clock.js';
export { InMemoryRecorder } from './in-memory-recorder.js';
export { ScriptedExecutor, untilStopped, type Script } from './scripted-executor.js';
export { ScriptedCommandRunner } from './scripted-command-runner.js';
export { isoPlus, makeChildRecord, makeRecord, makeRunRecord } from './run-record.js';
export { writeFinishedRun } from './finished-run.js';
export { parseExposition, sampleValue, type MetricFamily } from './exposition.js';
export { startPostgres, type PrivatePostgres } from './private-postgres.js';
