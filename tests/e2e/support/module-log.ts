import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './start-all.js';

/*
 * Which ES modules a real `trellis` process resolves (issue 21: an idle fleet under 200 MB; every
 * module loaded stays in its heap for good): a module hook preloaded into the process
 * (`node --import <preload>`) writes down each URL it resolves.
 */

const HOOKS = `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(process.env.MODULE_LOG, r.url + '\\n');
  return r;
}
`;

export interface ModuleLog {
  /** The file to preload (`--import`); `extra` (module code) was appended to it. */
  readonly preload: string;
  /** The environment the process needs beside its own (where the hook writes). */
  readonly env: { readonly MODULE_LOG: string };
  /** The modules resolved so far, by path under the repository (node_modules: by package). */
  loaded(): string[];
}

/** Writes the hook and its preload into `dir`. */
export const moduleLog = (dir: string, extra = ''): ModuleLog => {
  const hooks = join(dir, 'hooks.mjs');
  const preload = join(dir, 'preload.mjs');
  const log = join(dir, 'modules.txt');
  writeFileSync(hooks, HOOKS);
  writeFileSync(
    preload,
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n${extra}`,
  );
  writeFileSync(log, '');
  const root = pathToFileURL(ROOT).href;
  return {
    preload,
    env: { MODULE_LOG: log },
    loaded: () =>
      readFileSync(log, 'utf8')
        .split('\n')
        .filter((u) => u.startsWith(root))
        .map((u) => u.slice(root.length + 1).replace(/^node_modules\/\.pnpm\/[^/]+\//, '')),
  };
};
