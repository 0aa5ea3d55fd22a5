/*
 * Run and node statuses with their labels: the `@trellis/core/status` entry. It imports nothing,
 * so a browser bundle (the web UI, through @trellis/contract) can take it without the config
 * loader and its Node modules.
 */
export * from './run-status.js';
export * from './node-status.js';
