#!/usr/bin/env node
// The `trellis` binary: the compiled CLI (run `pnpm build` first; `pnpm trellis` does).
import { tuneDaemonHeapFor } from '../dist/wiring/daemon-heap.js';

// a long-running command's heap is set up before the CLI's modules load: loading them would grow
// its young generation first (packages/cli/src/wiring/daemon-heap.ts)
tuneDaemonHeapFor(process.argv.slice(2));
const { main } = await import('../dist/main.js');
await main();
// A command that failed has said why; whatever it had started (a server's timers, watchers or
// connections, when it could not listen) must not keep the process alive. stdout and stderr are
// synchronous on Linux (files, pipes, terminals), so nothing written is lost.
if (process.exitCode) process.exit();
// a service that stopped cleanly ends even when a handle it forgot holds the event loop
const { guardLinger } = await import('../dist/wiring/linger-guard.js');
guardLinger(process.argv.slice(2), 0, {
  err: (line) => process.stderr.write(`${line}\n`),
  exit: (code) => process.exit(code),
  resources: () => process.getActiveResourcesInfo(),
});
