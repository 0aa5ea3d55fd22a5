export { runCli, VERSION } from './run-cli.js';
export { main } from './main.js';
export { COMMANDS, findCommand } from './commands/registry.js';
export type { Command } from './commands/command.js';
export { ExitCode, type CliIo } from './io.js';
