/**
 * The program of the spawner process (see {@link SpawnerProcessRunner}), as CommonJS source for
 * `node -e`: a string, so it runs the same from the built package and from the TypeScript sources
 * under test, and loads nothing of ours.
 *
 * Protocol over the IPC channel (advanced serialization; one channel, so every message of a
 * process arrives in order):
 * - in: `{t: 'spawn', id, command, args, cwd, env, drainMs}`, `{t: 'pause'|'resume', id, fd}`.
 * - out: `{t: 'started', id, pid}` or `{t: 'failed', id, code, message}`; then `{t: 'out', id,
 *   fd, data}` for every chunk; then `{t: 'exit', id, exitCode, signal}` once both pipes reached
 *   EOF, or `drainMs` after the process exited while something it started still holds them open.
 *
 * A pipe is read only while its target wants more (`pause`/`resume`) and the channel is not
 * backed up, so a chatty process never piles up its output in memory here or in the parent.
 */
export const SPAWNER_SOURCE = `
'use strict';
const { spawn } = require('node:child_process');
const children = new Map();

// What \`ps\` shows instead of this whole program text.
process.title = 'trellis-spawner';

// The parent is gone: nothing can receive the output any more. Started processes keep running
// (they lead their own groups), as they would if the parent had spawned them itself.
process.on('disconnect', () => process.exit(0));

const forward = (id, fd, stream, gate) => {
  stream.on('data', (data) => {
    if (process.send({ t: 'out', id, fd, data }, undefined, {}, () => gate.set('channel', false)))
      return;
    gate.set('channel', true); // backed up: read on once this message has been written
  });
};

/** Pauses a stream while any reason holds, resumes it when none does. */
const makeGate = (stream) => {
  const held = new Set();
  return {
    set(reason, hold) {
      if (hold) held.add(reason);
      else held.delete(reason);
      if (held.size > 0) stream.pause();
      else stream.resume();
    },
  };
};

const start = (m) => {
  let child;
  try {
    child = spawn(m.command, m.args, {
      cwd: m.cwd,
      env: m.env,
      detached: true, // setsid(): the child leads a new process group
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (e) {
    process.send({ t: 'failed', id: m.id, code: e.code, message: e.message });
    return;
  }
  if (child.pid === undefined) {
    // The spawn failed; node says why in an 'error' event.
    child.once('error', (e) => process.send({ t: 'failed', id: m.id, code: e.code, message: e.message }));
    return;
  }
  const gates = { 1: makeGate(child.stdout), 2: makeGate(child.stderr) };
  children.set(m.id, gates);
  process.send({ t: 'started', id: m.id, pid: child.pid });
  child.on('error', () => undefined); // only kill() or IPC could raise one; neither is used here
  forward(m.id, 1, child.stdout, gates[1]);
  forward(m.id, 2, child.stderr, gates[2]);
  let settled = false;
  let drainTimer;
  const settle = (exitCode, signal) => {
    if (settled) return;
    settled = true;
    clearTimeout(drainTimer);
    children.delete(m.id);
    process.send({ t: 'exit', id: m.id, exitCode, signal });
  };
  child.once('close', settle);
  child.once('exit', (exitCode, signal) => {
    drainTimer = setTimeout(() => {
      child.stdout.destroy();
      child.stderr.destroy();
      settle(exitCode, signal);
    }, m.drainMs);
  });
};

process.on('message', (m) => {
  if (m.t === 'spawn') return start(m);
  const gate = children.get(m.id)?.[m.fd];
  if (gate) gate.set('target', m.t === 'pause');
});
`;
