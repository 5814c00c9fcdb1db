'use strict';
// The action's post step (post-if: always()): saves the journal, the client
// report (JSON and JUnit XML) and the server log into artifacts-dir unless
// save-on is never, then stops the server: SIGTERM, up to 10 s for it to
// exit, then SIGKILL; and checks that the port is free. It fails only when
// the server cannot be stopped.

const fs = require('fs');
const lib = require('./lib');

const GRACE_MS = 10000;

// ours tells whether pid still runs the binary main.js started (the pid may
// have been reused when the server died during the job). Without /proc,
// trust the pid.
function ours(pid, bin) {
  try {
    const exe = fs.readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, '');
    return exe === bin || exe === fs.realpathSync(bin);
  } catch (e) {
    return e.code !== 'ENOENT' || !fs.existsSync('/proc/self/exe');
  }
}

async function stop(pid) {
  const t0 = Date.now();
  try {
    process.kill(pid, 'SIGTERM');
  } catch (e) {
    if (e.code === 'ESRCH') return 'already gone';
    throw e;
  }
  while (Date.now() - t0 < GRACE_MS) {
    if (!lib.alive(pid)) return `stopped by SIGTERM in ${Date.now() - t0} ms`;
    await lib.sleep(100);
  }
  lib.warning(`mockserver (pid ${pid}) did not exit ${GRACE_MS / 1000} s after SIGTERM: SIGKILL`);
  try { process.kill(pid, 'SIGKILL'); } catch (_) { /* gone meanwhile */ }
  for (let i = 0; i < 50 && lib.alive(pid); i++) await lib.sleep(100);
  if (lib.alive(pid)) throw new Error(`mockserver (pid ${pid}) still runs after SIGKILL`);
  return `killed after ${Date.now() - t0} ms`;
}

async function post() {
  if (lib.getState('command') === 'save') return; // a save step started nothing
  const pid = Number(lib.getState('pid'));
  if (!pid) {
    lib.info('mediamock: no server was started (the main step failed early or did not run); nothing to stop');
    return;
  }
  const port = Number(lib.getState('port'));
  const url = lib.getState('url');
  const bin = lib.getState('bin');
  const log = lib.getState('log');
  const token = lib.getState('control-token');
  lib.mask(token);
  const running = lib.alive(pid) && ours(pid, bin);
  if (!running) lib.warning(`mockserver (pid ${pid}) exited during the job; its log:\n${lib.tail(log)}`);

  if (lib.getState('save-on') !== 'never') {
    // A server that is gone has no journal to give: its log is kept all the same.
    await lib.save(running ? url : '', token, lib.getState('artifacts-dir'), log);
  }

  if (running) lib.info(`mockserver (pid ${pid}): ${await stop(pid)}`);
  try { fs.unlinkSync(lib.stateFile(port)); } catch (_) { /* already gone */ }
  for (let i = 0; i < 20; i++) {
    if (await lib.portFree(port)) {
      lib.info(`port ${port} is free`);
      return;
    }
    await lib.sleep(100);
  }
  lib.warning(`port ${port} is still taken after mockserver stopped`);
}

post().catch((e) => {
  lib.error(`mediamock post: ${e.message || e}`);
  process.exitCode = 1;
});
