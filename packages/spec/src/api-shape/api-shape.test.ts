import { describe, expect, it } from 'vitest';
import { parseDagFile } from '../load-dag-file.js';
import type { Dag } from '../model/dag.js';
import { toApiDagDetails, toApiDagSummary, toApiStep } from './api-shape.js';

const dagOf = (yaml: string): Dag => {
  const r = parseDagFile(yaml, { name: 'shaped', cwd: '/srv/dags' });
  expect(r.errors).toEqual([]);
  return r.main.dag;
};

const full = dagOf(`
description: every field the API shows
group: reports
tags: [nightly, finance]
schedule:
  start: ["CRON_TZ=Europe/Berlin 0 2 * * *", "@hourly"]
  stop: "0 20 * * *"
params:
  - DATE: today
  - positional value
env:
  - LOG_LEVEL: debug
  - GREETING=hello there
logDir: /var/log/shaped
delaySec: 7
histRetentionDays: 9
maxActiveRuns: 3
maxActiveSteps: 4
preconditions:
  - condition: "\`date +%u\`"
    expected: "re:[1-5]"
    error: weekdays only
  - test -d /srv
ssh:
  user: deploy
  host: example.com
  password: dag-level-secret
steps:
  - name: remote
    id: remote1
    description: runs over ssh with the DAG-level settings
    command: uptime -p
    dir: /tmp
    stdout: /tmp/out.log
    stderr: /tmp/err.log
    output: $UPTIME
    mailOnError: true
    preconditions:
      - condition: "\${DATE}"
        expected: today
    repeatPolicy:
      repeat: while
      exitCode: [0]
      intervalSec: 30
  - name: child
    run: other-dag
    params:
      FILE: a b.csv
  - name: own-ssh
    command: hostname
    executor:
      type: ssh
      config:
        user: admin
        host: db.example.com
        password: step-level-secret
handlerOn:
  success: echo ok
  failure:
    command: ./notify.sh failure
  cancel:
    script: echo cancelled
  exit:
    run: cleanup-dag
`);

describe('toApiDagSummary', () => {
  it('returns every field of the DAG list item "dag" of the spec, and no more', () => {
    const s = toApiDagSummary(full);
    expect(Object.keys(s).sort()).toEqual([
      'defaultParams',
      'description',
      'group',
      'name',
      'params',
      'schedule',
      'tags',
    ]);
    expect(s).toEqual({
      name: 'shaped',
      group: 'reports',
      schedule: [{ expression: 'CRON_TZ=Europe/Berlin 0 2 * * *' }, { expression: '@hourly' }],
      description: 'every field the API shows',
      params: ['DATE=today', '1=positional value'],
      defaultParams: 'DATE="today" "positional value"',
      tags: ['nightly', 'finance'],
    });
  });

  it('gives empty strings and empty lists, never null, for a minimal DAG', () => {
    const s = toApiDagSummary(dagOf('steps:\n  - echo hi\n'));
    expect(s).toEqual({
      name: 'shaped',
      group: '',
      schedule: [],
      description: '',
      params: [],
      defaultParams: '',
      tags: [],
    });
  });
});

describe('toApiDagDetails', () => {
  const d = toApiDagDetails(full);

  it('returns every field the spec lists for DAG details', () => {
    for (const key of [
      'name',
      'group',
      'schedule',
      'description',
      'env',
      'logDir',
      'handlerOn',
      'steps',
      'delay',
      'histRetentionDays',
      'preconditions',
      'maxActiveRuns',
      'maxActiveSteps',
      'params',
      'defaultParams',
      'tags',
    ])
      expect(d).toHaveProperty(key);
    expect(d).toMatchObject({
      name: 'shaped',
      group: 'reports',
      schedule: [{ expression: 'CRON_TZ=Europe/Berlin 0 2 * * *' }, { expression: '@hourly' }],
      description: 'every field the API shows',
      env: ['LOG_LEVEL=debug', 'GREETING=hello there'],
      logDir: '/var/log/shaped',
      delay: 7,
      histRetentionDays: 9,
      maxActiveRuns: 3,
      maxActiveSteps: 4,
      params: ['DATE=today', '1=positional value'],
      defaultParams: 'DATE="today" "positional value"',
      tags: ['nightly', 'finance'],
    });
    expect(d.steps.map((s) => s.name)).toEqual(['remote', 'child', 'own-ssh']);
  });

  it('shows preconditions as {condition, expected, error}, with empty strings when unset', () => {
    expect(d.preconditions).toEqual([
      { condition: '`date +%u`', expected: 're:[1-5]', error: 'weekdays only' },
      { condition: 'test -d /srv', expected: '', error: '' },
    ]);
  });

  it('shows each handler as {name, command}, whatever form it was written in', () => {
    expect(d.handlerOn).toEqual({
      success: { name: 'onSuccess', command: 'echo ok' },
      failure: { name: 'onFailure', command: './notify.sh failure' },
      cancel: { name: 'onCancel', command: 'echo cancelled' },
      exit: { name: 'onExit', command: 'cleanup-dag' },
    });
  });

  it('has only the handlers that are defined', () => {
    expect(toApiDagDetails(dagOf('steps:\n  - echo hi\n')).handlerOn).toEqual({});
  });

  it('gives empty lists, never null, for a minimal DAG', () => {
    const m = toApiDagDetails(dagOf('steps:\n  - echo hi\n'));
    for (const key of ['schedule', 'env', 'steps', 'preconditions', 'params', 'tags'] as const)
      expect(Array.isArray(m[key])).toBe(true);
    expect(m).toMatchObject({
      logDir: '',
      delay: 0,
      histRetentionDays: 30,
      maxActiveRuns: 1,
      maxActiveSteps: 1,
      defaultParams: '',
    });
  });

  it('redacts passwords inherited from the DAG-level ssh settings and set on a step', () => {
    const json = JSON.stringify(d);
    expect(json).not.toContain('dag-level-secret');
    expect(json).not.toContain('step-level-secret');
    expect(d.steps[0]?.executor.config).toMatchObject({
      user: 'deploy',
      host: 'example.com',
      password: '********',
    });
    expect(d.steps[2]?.executor.config).toMatchObject({ user: 'admin', password: '********' });
  });

  it('does not change the normalised DAG when redacting', () => {
    expect(full.steps[0]?.executor.config).toMatchObject({ password: 'dag-level-secret' });
    expect(full.ssh?.password).toBe('dag-level-secret');
  });
});

describe('toApiStep', () => {
  const [remote, child] = full.steps;

  it('returns every field the spec lists for a step object', () => {
    const s = toApiStep(remote ?? full.steps[0]!);
    for (const key of [
      'name',
      'id',
      'description',
      'dir',
      'command',
      'args',
      'stdout',
      'stderr',
      'output',
      'depends',
      'run',
      'params',
      'preconditions',
      'repeatPolicy',
      'mailOnError',
    ])
      expect(s).toHaveProperty(key);
    expect(s).toMatchObject({
      name: 'remote',
      id: 'remote1',
      description: 'runs over ssh with the DAG-level settings',
      dir: '/tmp',
      command: 'uptime',
      args: ['-p'],
      stdout: '/tmp/out.log',
      stderr: '/tmp/err.log',
      output: 'UPTIME',
      depends: [],
      run: '',
      params: '',
      preconditions: [{ condition: '${DATE}', expected: 'today', error: '' }],
      mailOnError: true,
    });
  });

  it('shows repeatPolicy as {repeat: boolean, interval: integer}', () => {
    expect(toApiStep(remote!).repeatPolicy).toMatchObject({ repeat: true, interval: 30 });
    expect(toApiStep(child!).repeatPolicy).toMatchObject({ repeat: false, interval: 0 });
  });

  it('shows a child DAG step with run, params as a string, and the chain dependency', () => {
    expect(toApiStep(child!)).toMatchObject({
      name: 'child',
      command: '',
      args: [],
      run: 'other-dag',
      params: 'FILE="a b.csv"',
      depends: ['remote'],
      preconditions: [],
      mailOnError: false,
    });
  });

  it('gives empty strings and lists for a bare step, and null only for retryPolicy and parallel', () => {
    const s = toApiStep(dagOf('steps:\n  - script: echo hi\n').steps[0]!);
    expect(s).toMatchObject({
      id: '',
      description: '',
      dir: '',
      command: '',
      stdout: '',
      stderr: '',
      output: '',
      run: '',
      params: '',
    });
    expect(s.args).toEqual([]);
    expect(s.depends).toEqual([]);
    expect(s.preconditions).toEqual([]);
    for (const [key, value] of Object.entries(s)) expect(value, key).not.toBeUndefined();
    // Objects with no content are null (retryPolicy, parallel); lists are never null.
    expect(Object.values(s).filter((v) => v === null)).toHaveLength(2);
    expect(s.retryPolicy).toBeNull();
    expect(s.parallel).toBeNull();
  });
});
