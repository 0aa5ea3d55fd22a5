import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { NodeStatus } from '@trellis/core';
import { createExecutorSet } from '@trellis/executors';
import {
  createTempHome,
  localRunService,
  type TempHome,
} from '../integration/support/local-run-service.js';
import { checkRun } from './support/check.js';
import { readExpectation, type Expectation } from './support/manifest.js';
import { startOpsApi, startSmtpSink, type OpsApi, type SmtpSink } from './support/servers.js';

/*
 * The DAG corpus (tests/corpus/README.md): every tests/corpus/dags/<name>.yaml runs end to end
 * through RunService, the local dispatcher, the real executors (shell, http, mail, jq, docker) and
 * the file store, and its run is checked against tests/corpus/expect/<name>.yaml. Each DAG gets a
 * fresh HOME holding a copy of the whole corpus as its DAGs folder (child DAGs live there too).
 */

const here = dirname(fileURLToPath(import.meta.url));
const dagsDir = join(here, 'dags');
const expectDir = join(here, 'expect');
const names = readdirSync(dagsDir)
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => f.slice(0, -'.yaml'.length))
  .sort();

let api: OpsApi;
let smtp: SmtpSink;
const executorSet = createExecutorSet();
let t: TempHome | undefined;

beforeAll(async () => {
  api = await startOpsApi();
  smtp = await startSmtpSink();
});
afterAll(async () => {
  await api.close();
  await smtp.close();
});
afterEach(() => {
  vi.unstubAllEnvs();
  t?.cleanup();
  t = undefined;
});

/** `{{api}}` and `{{smtp_port}}` in DAG files and fixtures name the servers of this test file. */
const fill = (text: string): string =>
  text.replaceAll('{{api}}', api.url).replaceAll('{{smtp_port}}', String(smtp.port));

/** Resolves once the file at `path` holds `text` (bounded: 10 s in 10 ms polls of the step log). */
const untilPrinted = async (path: string, text: string): Promise<void> => {
  for (let i = 0; i < 1000; i++) {
    if (existsSync(path) && readFileSync(path, 'utf8').includes(text)) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${path} never held "${text}"`);
};

/** A fresh HOME with the corpus as its DAGs folder and the expectation's `files` in place. */
const prepareHome = (want: Expectation): TempHome => {
  const home = createTempHome('trellis-corpus-');
  for (const n of names) home.dag(n, fill(readFileSync(join(dagsDir, `${n}.yaml`), 'utf8')));
  for (const [path, content] of Object.entries(want.files ?? {})) {
    const full = join(home.home, path);
    mkdirSync(dirname(full), { recursive: true });
    // a script (`#!` first) is written executable
    writeFileSync(full, fill(content), { mode: content.startsWith('#!') ? 0o755 : 0o644 });
  }
  return home;
};

const runOne = async (name: string, want: Expectation): Promise<void> => {
  t = prepareHome(want);
  // `~` means the user's home wherever it is read (process env or the steps' env): this one
  vi.stubEnv('HOME', t.home);
  api.reset();
  smtp.mails.length = 0;
  const { runs, store, events } = localRunService(t, { executorSet, processQueues: true });
  if (want.stopWhen !== undefined) {
    const { step: stopAt, printed } = want.stopWhen;
    events.on('node:statusChanged', (r, step, status) => {
      if (step !== stopAt || status !== NodeStatus.Running || r.parent !== undefined) return;
      const out = r.nodes.find((n) => n.step.name === step)?.stdout ?? '';
      void (printed === undefined ? Promise.resolve() : untilPrinted(out, printed)).then(() =>
        runs.stop({ name: r.name, dagRunId: r.dagRunId }),
      );
    });
  }
  const started = await runs.start({
    dag: name,
    ...(want.params !== undefined ? { params: fill(want.params) } : {}),
  });
  const final = await started.done;
  await checkRun(name, final, want, {
    readRun: (ref, root) => store.getRun(ref, { root }),
    home: t.home,
    requests: api.requests,
    mails: smtp.mails,
  });
};

describe('the DAG corpus, each DAG run end to end', () => {
  it('has at least 60 DAGs, each with an expectation file', () => {
    expect(names.length).toBeGreaterThanOrEqual(60);
    const missing = names.filter((n) => !existsSync(join(expectDir, `${n}.yaml`)));
    expect(missing, 'DAGs without tests/corpus/expect/<name>.yaml').toEqual([]);
    const orphans = readdirSync(expectDir).filter(
      (f) => !names.includes(f.slice(0, -'.yaml'.length)),
    );
    expect(orphans, 'expectation files without a DAG').toEqual([]);
  });

  for (const name of names) {
    const file = join(expectDir, `${name}.yaml`);
    if (!existsSync(file)) continue;
    let want: Expectation;
    try {
      want = readExpectation(file);
    } catch (e) {
      it(name, () => {
        throw e;
      });
      continue;
    }
    // A DAG that needs a fix not merged yet must fail today; the marker goes with the merge.
    const test = want.pendingFix === undefined ? it : it.fails;
    const title = want.pendingFix === undefined ? name : `${name} (pending fix ${want.pendingFix})`;
    test(title, () => runOne(name, want));
  }
});
