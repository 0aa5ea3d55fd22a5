#!/usr/bin/env node
// The `trellis` binary: the compiled CLI (run `pnpm build` first; `pnpm trellis` does).
import { main } from '../dist/main.js';

await main();
