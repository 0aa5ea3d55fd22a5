// How fast DAG files are parsed and validated: the cost the DAG list, the scheduler's reload and
// `trellis validate` pay per file.
import { performance } from 'node:perf_hooks';
import { parseDagFile } from '../packages/spec/dist/index.js';

const typical = (i) => `name: dag-${i}
description: typical DAG number ${i}
schedule: "CRON_TZ=Europe/Berlin ${i % 60} 2 * * *"
tags: [etl, nightly]
params:
  - DAY: yesterday
  - REGION: eu
env:
  - OUT: /tmp/out-${i}
steps:
${Array.from(
  { length: 20 },
  (_, s) => `  - name: step-${s}
    command: ./run.sh --part ${s} --day \${DAY}
    retryPolicy:
      limit: 2
      intervalSec: 5
      backoff: true
    continueOn:
      exitCode: [3]`,
).join('\n')}
handlerOn:
  failure:
    command: ./notify.sh failed
`;

const big = `type: graph
steps:
${Array.from(
  { length: 1000 },
  (_, s) => `  - name: s${s}
    command: echo ${s}
    depends: [${s === 0 ? '' : `s${s - 1}`}${s > 1 ? `, s${Math.floor(s / 2)}` : ''}]`,
).join('\n')}
`;

// Every dependency unknown: each one is a problem, and "did you mean" hints must stay cheap.
const unknownDeps = `type: graph
steps:
${Array.from(
  { length: 10_000 },
  (_, s) => `  - name: s${s}
    command: echo ${s}
    depends: [missing-${s}]`,
).join('\n')}
`;

const time = (fn, n) => {
  for (let i = 0; i < Math.min(n, 50); i++) fn(i); // warm-up
  const t0 = performance.now();
  for (let i = 0; i < n; i++) fn(i);
  return (performance.now() - t0) / n;
};

export default function run() {
  const texts = Array.from({ length: 1000 }, (_, i) => typical(i));
  const check = parseDagFile(texts[0], { location: '/dags/dag-0.yaml' });
  if (!check.valid) throw new Error(`benchmark DAG is invalid: ${check.errors.join('; ')}`);

  const perTypical = time(
    (i) => parseDagFile(texts[i % texts.length], { location: `/dags/dag-${i}.yaml` }),
    2000,
  );
  console.log(
    `typical DAG (20 steps, policies, schedule): ${(perTypical * 1000).toFixed(0)} us/file, ${Math.round(1000 / perTypical)} files/s`,
  );

  const perBig = time(() => parseDagFile(big, { location: '/dags/big.yaml' }), 20);
  console.log(`1,000-step graph DAG: ${perBig.toFixed(1)} ms/file`);

  const perUnknown = time(() => parseDagFile(unknownDeps, { location: '/dags/unknown.yaml' }), 3);
  console.log(`10,000 steps each with an unknown dependency: ${perUnknown.toFixed(0)} ms/file`);

  globalThis.gc?.();
  const heap0 = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const parsed = texts.map((t, i) => parseDagFile(t, { location: `/dags/dag-${i}.yaml` }));
  const ms = performance.now() - t0;
  globalThis.gc?.();
  const heapMb = (process.memoryUsage().heapUsed - heap0) / 1024 / 1024;
  console.log(
    `1,000 typical DAG files: ${ms.toFixed(0)} ms to parse, ${heapMb.toFixed(1)} MB heap retained (${parsed.length} kept)`,
  );
}
