import type { Command } from './command.js';
import { STORE_OPTIONS, type FlagSpec } from './flags.js';

const flagHead = (name: string, f: FlagSpec): string =>
  `${f.short ? `-${f.short}, ` : '    '}--${name}${f.type === 'string' ? ` ${f.value ?? '<value>'}` : ''}`;

/** `trellis <command> --help`: usage, summary, then every flag with its description and example. */
export const commandHelp = (command: Command): string => {
  const flags: [string, FlagSpec][] = Object.entries({
    ...STORE_OPTIONS,
    ...command.options,
  });
  const width = Math.max(...flags.map(([n, f]) => flagHead(n, f).length));
  return [
    `usage: ${command.usage}`,
    '',
    `${command.summary}.`,
    ...(command.details ? ['', command.details] : []),
    '',
    'flags:',
    ...flags.flatMap(([n, f]) => [
      `  ${flagHead(n, f).padEnd(width)}  ${f.description}`,
      `  ${' '.repeat(width)}  e.g. ${f.example}`,
    ]),
  ].join('\n');
};
