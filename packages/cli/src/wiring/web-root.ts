import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The built web UI (`packages/web/dist`, made by `pnpm build`), found through the workspace
 * dependency on @trellis/web; `built` is false when index.html is not there yet.
 */
export const findWebRoot = (): { readonly root: string; readonly built: boolean } => {
  const pkg = createRequire(import.meta.url).resolve('@trellis/web/package.json');
  const root = join(dirname(pkg), 'dist');
  return { root, built: existsSync(join(root, 'index.html')) };
};
