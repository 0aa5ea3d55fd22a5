// Types of bundle-cli.mjs for its TypeScript test (tests/e2e/cli-bundle.test.ts).
import type { Metafile } from 'esbuild';

export declare const EXTERNAL: readonly string[];
export declare const bundleCli: (root: string, outDir: string) => Promise<Metafile>;
