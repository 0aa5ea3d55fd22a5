import { mkdirSync } from 'node:fs';
import type { Config } from '@trellis/core';

/**
 * Creates the DAGs, data and log folders of a fresh `SVC_HOME`, for the long-running roles (a
 * server's health needs a writable data folder from the start).
 */
export const ensureFolders = (config: Readonly<Config>): void => {
  for (const dir of [config.paths.dagsDir, config.paths.dataDir, config.paths.logDir])
    mkdirSync(dir, { recursive: true });
};
