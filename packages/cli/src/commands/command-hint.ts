import type { Command } from './command.js';

/**
 * The two-word commands that `word` begins (`migrate` -> `migrate history`, `migrate store`):
 * typed alone, the first word names no command, but what the user meant is one of these.
 */
export const twoWordCommandsFor = (word: string, commands: readonly Command[]): string[] =>
  commands.map((c) => c.name).filter((n) => n.startsWith(`${word} `));

/** `"a"`, `"a" or "b"`, `"a", "b" or "c"`: the commands a user may have meant, quoted. */
export const oneOf = (names: readonly string[]): string => {
  const quoted = names.map((n) => JSON.stringify(n));
  return quoted.length < 2
    ? quoted.join('')
    : `${quoted.slice(0, -1).join(', ')} or ${quoted[quoted.length - 1]}`;
};
