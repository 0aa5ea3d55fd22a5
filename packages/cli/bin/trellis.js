#!/usr/bin/env node
// The `trellis` binary: the compiled CLI (run `pnpm build` first; `pnpm trellis` does).
import { main } from '../dist/main.js';

await main();
// A command that failed has said why; whatever it had started (a server's timers, watchers or
// connections, when it could not listen) must not keep the process alive. stdout and stderr are
// synchronous on Linux (files, pipes, terminals), so nothing written is lost.
if (process.exitCode) process.exit();
