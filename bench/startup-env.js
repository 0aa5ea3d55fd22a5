// The two environments every start-up figure is printed in (docs/decisions.md, "Start-up
// figures in two environments"). Node 20 reads and parses the PEM bundle NODE_EXTRA_CA_CERTS
// names as the process starts, before any of our code runs: with this machine's
// /etc/ssl/certs/ca-certificates.crt that is about 60 ms of every `node` start. The product keeps
// honouring the variable (users behind a TLS-inspecting proxy need it), so each figure is given
// both with the machine's environment and with the variable unset, beside the `node -e 0` floor
// of the same environment: what is Node's and what is ours can be told apart.
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { pct } from './util.js';

// eslint-disable-next-line no-restricted-properties -- the bench measures Node's own start-up, not our config
const CA = process.env.NODE_EXTRA_CA_CERTS;

/**
 * `[label, env]` pairs over `base` (the spawned process's own variables): the machine's
 * environment (its NODE_EXTRA_CA_CERTS, when it sets one), then the same without it.
 */
export const startupEnvs = (base) => [
  [
    CA ? `machine env (NODE_EXTRA_CA_CERTS=${CA})` : 'machine env (no NODE_EXTRA_CA_CERTS)',
    CA ? { ...base, NODE_EXTRA_CA_CERTS: CA } : { ...base },
  ],
  ['NODE_EXTRA_CA_CERTS unset', { ...base }],
];

/** Median ms of `node -e 0`, spawn to exit, in `env` (one warm-up run first). */
export const nodeFloor = (env, runs) => {
  const once = () => {
    const t0 = performance.now();
    spawnSync(process.execPath, ['-e', '0'], { env, stdio: 'ignore' });
    return performance.now() - t0;
  };
  once();
  return pct(
    Array.from({ length: runs }, () => once()),
    50,
  );
};
