import react from '@vitejs/plugin-react';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defaultClientConditions, defineConfig, type Plugin } from 'vite';

/** Text assets worth compressing; images other than SVG are compressed already. */
const COMPRESSIBLE = /\.(js|mjs|css|html|svg|json|map|txt)$/;
/** Below this a compressed copy saves less than its headers cost. */
const MIN_BYTES = 1024;

/**
 * After the bundle is written, puts `<file>.br` (brotli, best quality) and `<file>.gz` (gzip -9)
 * beside every text asset under `dist/assets/`; the API server sends them to a browser that
 * accepts them (packages/api/src/web/compressed-assets.ts). Compressing once at build time keeps
 * brotli's best level off the request path.
 */
const precompress = (): Plugin => {
  let outDir = 'dist';
  return {
    name: 'trellis-precompress',
    apply: 'build',
    configResolved(config) {
      outDir = config.build.outDir;
    },
    closeBundle() {
      const dir = join(outDir, 'assets');
      for (const name of readdirSync(dir)) {
        const file = join(dir, name);
        if (!COMPRESSIBLE.test(name) || statSync(file).size < MIN_BYTES) continue;
        const body = readFileSync(file);
        writeFileSync(
          `${file}.br`,
          brotliCompressSync(body, {
            params: {
              [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
              [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
            },
          }),
        );
        writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }));
      }
    },
  };
};

/*
 * `base: './'`: asset URLs are relative, and the server injects `<base href="<basePath>/">` into
 * index.html, so one build works under any `server.basePath` and on client routes at any depth.
 * Hashed file names under assets/ are what lets the server cache them for a year.
 * `@trellis/source`: @trellis/contract is bundled from its TypeScript sources, so the UI builds
 * without the server packages built first.
 */
export default defineConfig({
  base: './',
  plugins: [react(), precompress()],
  resolve: { conditions: ['@trellis/source', ...defaultClientConditions] },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    chunkSizeWarningLimit: 1000,
  },
  server: {
    // `pnpm --filter @trellis/web dev` against a `trellis start-all` on the default port.
    proxy: { '/api': 'http://localhost:8080' },
  },
});
