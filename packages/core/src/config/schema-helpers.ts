import * as z from 'zod';

/*
 * Building blocks of the config schemas. Each hint is what the user sees after the offending path
 * and value, so it says what to write instead.
 */

const PORT_HINT = 'use an integer from 1 to 65535';
const BOOLEAN_HINT = 'use true or false';

/** A TCP port: an integer from 1 to 65535. */
export const portSchema = () =>
  z.int({ error: PORT_HINT }).min(1, { error: PORT_HINT }).max(65_535, { error: PORT_HINT });

const LISTEN_PORT_HINT = 'use an integer from 1 to 65535, or 0 for any free port';

/** A port to listen on: 1 to 65535, or 0 for any free port (the server prints the one it got). */
export const listenPortSchema = () =>
  z
    .int({ error: LISTEN_PORT_HINT })
    .min(0, { error: LISTEN_PORT_HINT })
    .max(65_535, { error: LISTEN_PORT_HINT });

/** An integer of at least `min`. */
export const intAtLeast = (min: number, example: number) => {
  const hint = `use an integer of at least ${min}, e.g. ${example}`;
  return z.int({ error: hint }).min(min, { error: hint });
};

/** A non-empty string; `what` completes "use ..." in the hint. */
export const text = (what: string) => {
  const hint = `use ${what}`;
  return z.string({ error: hint }).min(1, { error: hint });
};

/** A boolean, with a hint that YAML wants `true` or `false`. */
export const boolean = () => z.boolean({ error: BOOLEAN_HINT });

/** A strict object whose "not a mapping" error says so in YAML terms. */
export const section = <Shape extends z.ZodRawShape>(shape: Shape) =>
  z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'invalid_type' ? 'use a mapping of "key: value" lines' : undefined,
  });

/**
 * Adds an issue at `[index, 'name']` of a list for every entry whose name an earlier entry
 * already uses. `what` names the entry kind in the hint ("queue", "user").
 */
export const checkUniqueNames = (
  entries: readonly { readonly name: string }[],
  ctx: z.RefinementCtx,
  what: string,
  at: readonly PropertyKey[] = [],
): void => {
  const seen = new Set<string>();
  entries.forEach((entry, i) => {
    if (seen.has(entry.name)) {
      ctx.addIssue({
        code: 'custom',
        path: [...at, i, 'name'],
        message: `rename or remove this ${what}: the name "${entry.name}" is already used`,
      });
    }
    seen.add(entry.name);
  });
};
