import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder of the built web UI: in the repository `packages/web/dist` (made by `pnpm build`),
 * found through the workspace dependency on @trellis/web; in the packed `trellis` package
 * (scripts/package.mjs), which has no @trellis/web to resolve, the `web/` folder beside the
 * bundle's `dist/`.
 */
const webDist = (): string => {
  try {
    return join(
      dirname(createRequire(import.meta.url).resolve('@trellis/web/package.json')),
      'dist',
    );
  } catch {
    return join(dirname(fileURLToPath(import.meta.url)), '..', 'web');
  }
};

/** The built web UI's folder; `built` is false when index.html is not there yet. */
export const findWebRoot = (): { readonly root: string; readonly built: boolean } => {
  const root = webDist();
  return { root, built: existsSync(join(root, 'index.html')) };
};
