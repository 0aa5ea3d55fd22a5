import react from '@vitejs/plugin-react';
import { defaultClientConditions, defineConfig } from 'vite';

/*
 * `base: './'`: asset URLs are relative, and the server injects `<base href="<basePath>/">` into
 * index.html, so one build works under any `server.basePath` and on client routes at any depth.
 * Hashed file names under assets/ are what lets the server cache them for a year.
 * `@trellis/source`: @trellis/contract is bundled from its TypeScript sources, so the UI builds
 * without the server packages built first.
 */
export default defineConfig({
  base: './',
  plugins: [react()],
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
