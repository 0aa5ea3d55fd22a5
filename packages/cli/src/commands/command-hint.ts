import type { Command } from './command.js';

/**
 * The two-word command that `word` begins, when exactly one does (`migrate` -> `migrate history`):
 * typed alone, the first word names no command, but what the user meant is plain.
 */
export const twoWordCommandFor = (
  word: string,
  commands: readonly Command[],
): string | undefined => {
  const names = commands.map((c) => c.name).filter((n) => n.startsWith(`${word} `));
  return names.length === 1 ? names[0] : undefined;
};
