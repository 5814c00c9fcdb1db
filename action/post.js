'use strict';
// The action's post step (post-if: always()): saves the journal, the client
// report (JSON and JUnit XML) and the server log into artifacts-dir unless
// save-on is never, then stops the server: SIGTERM, up to 10 s for it to
// exit, then SIGKILL; and checks that the port is free. It fails only when
// the server cannot be stopped.

const fs = require('fs');
const path = require('path');
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

// save writes the journal and the reports (when url is set) and the log into dir.
async function save(url, token, dir, log) {
  fs.mkdirSync(dir, { recursive: true });
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const files = [
    ['journal.json', '/_mock/journal?limit=100000'],
    ['report.json', '/_mock/report?format=json'],
    ['report.xml', '/_mock/report?format=junit'],
  ];
  const saved = [];
  for (const [name, p] of url ? files : []) {
    try {
      const res = await lib.request(url + p, { headers, timeoutMs: 30000 });
      if (res.status !== 200) {
        lib.warning(`GET ${p}: HTTP ${res.status}: ${res.body.toString('utf8').slice(0, 300)}`);
        continue;
      }
      fs.writeFileSync(path.join(dir, name), res.body);
      saved.push(name);
      if (name === 'report.json') {
        try {
          const r = JSON.parse(res.body.toString('utf8'));
          const findings = Array.isArray(r.findings) ? r.findings : [];
          const by = {};
          for (const f of findings) by[f.severity] = (by[f.severity] || 0) + 1;
          const counts = Object.entries(by).map(([s, n]) => `${n} ${s}`).join(', ');
          lib.info(`client report: ${findings.length} finding(s)${counts ? ` (${counts})` : ''}`);
        } catch (_) { /* the file is saved; the summary is a courtesy */ }
      }
    } catch (e) {
      lib.warning(`GET ${p}: ${e.message}`);
    }
  }
  if (log && fs.existsSync(log)) {
    fs.copyFileSync(log, path.join(dir, 'server.log'));
    saved.push('server.log');
  }
  lib.info(`mediamock artifacts in ${dir}: ${saved.join(', ') || 'none'} (upload them with actions/upload-artifact, path: ${dir})`);
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
    await save(running ? url : '', token, lib.getState('artifacts-dir'), log);
  }

  if (running) lib.info(`mockserver (pid ${pid}): ${await stop(pid)}`);
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
