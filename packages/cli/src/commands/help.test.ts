import { describe, expect, it } from 'vitest';
import { runCli } from '../run-cli.js';
import { COMMANDS } from './registry.js';
import { STORE_OPTIONS, type FlagSpec } from './flags.js';

const help = async (name: string): Promise<{ code: number; out: string }> => {
  const out: string[] = [];
  const code = await runCli([...name.split(' '), '--help'], {
    out: (l) => out.push(l),
    err: (l) => out.push(l),
    env: {},
    cwd: '/',
  });
  return { code, out: out.join('\n') };
};

describe('trellis <command> --help', () => {
  it.each(COMMANDS.filter((c) => c.run).map((c) => [c.name, c] as const))(
    '%s describes every flag it accepts, each with an example',
    async (name, command) => {
      const { code, out } = await help(name);
      expect(code).toBe(0);
      expect(out).toMatch(new RegExp(`^usage: trellis ${name}\\b`));
      const lines = out.split('\n');
      for (const [flag, spec] of Object.entries<FlagSpec>({
        ...STORE_OPTIONS,
        ...command.options,
      })) {
        const at = lines.findIndex((l) => new RegExp(`^ +(-\\w, )?--${flag}\\b`).test(l));
        expect(at, `--${flag} of ${name}`).toBeGreaterThan(-1);
        expect(lines[at]).toContain(spec.description);
        expect(lines[at + 1]?.trim()).toBe(`e.g. ${spec.example}`);
        expect(spec.example).toMatch(
          new RegExp(`^trellis \\S.*(--${flag}|-${spec.short ?? '-'})\\b`),
        );
      }
    },
  );

  it('answers --help before checking the other arguments', async () => {
    expect((await help('start')).out).toMatch(/--wait-timeout <seconds>/);
  });
});
