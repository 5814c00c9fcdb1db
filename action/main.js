'use strict';
// The action's main step: gets a mockserver binary (built from the action's
// own checkout, or a published release's archive, verified against the
// release's checksums), starts it detached on 127.0.0.1:<port>, waits until
// it is healthy, and hands the job its address and a key. action/post.js
// stops it at the end of the job.

const childProcess = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');
const lib = require('./lib');

const EXE = process.platform === 'win32' ? '.exe' : '';
// Flags the action sets itself (or cannot serve): refused in args.
const OWN_FLAGS = {
  '--addr': 'use the port input',
  '--db': 'the action keeps the state file in the runner\'s temporary directory',
  '--exit-with-parent': 'the step exits while the server runs; the post step stops it',
  '--tls': 'the action waits for and hands out a plain http address',
  '--tls-cert': 'the action waits for and hands out a plain http address',
  '--tls-key': 'the action waits for and hands out a plain http address',
  '--control-token': 'use the control-token input',
};

class Failure extends Error {}

function run(cmd, args, opts = {}) {
  const r = childProcess.spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  return r;
}

// ---- the binary: from the checkout ------------------------------------------

function buildFromSource(binDir) {
  const src = process.env.GITHUB_ACTION_PATH || lib.ROOT;
  const probe = run('go', ['version']);
  if (probe.error) {
    throw new Failure('version: source builds mockserver from the action\'s checkout with Go, and `go` is not on this runner\'s PATH: ' +
      'add a step `uses: actions/setup-go@v5` (with go-version-file: the action\'s go.mod, or go-version: "1.26") before this one, ' +
      'or, once a release is published, set version to that release.');
  }
  let version = 'source';
  try {
    version = fs.readFileSync(path.join(src, 'VERSION'), 'utf8').trim() + '+source';
  } catch (_) { /* a checkout without VERSION still builds */ }
  const bin = path.join(binDir, 'mockserver' + EXE);
  const args = ['build', '-trimpath', '-ldflags', `-s -w -X main.version=${version}`, '-o', bin, './cmd/mockserver'];
  lib.info(`Building mockserver from ${src} with ${probe.stdout.trim()}: go ${args.join(' ')}`);
  const t = Date.now();
  const env = { ...process.env, CGO_ENABLED: '0' };
  delete env.GOOS; delete env.GOARCH; delete env.GOFLAGS;
  const r = run('go', args, { cwd: src, env });
  if (r.status !== 0) {
    throw new Failure(`go build failed in ${src} (exit ${r.status}):\n${(r.stderr || '') + (r.stdout || '')}`.trimEnd());
  }
  lib.info(`Built ${bin} in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  return bin;
}

// ---- the binary: from a published release -------------------------------------

function platform() {
  const goos = { linux: 'linux', darwin: 'darwin', win32: 'windows' }[process.platform];
  const goarch = { x64: 'amd64', arm64: 'arm64' }[process.arch];
  if (!goos || !goarch) throw new Failure(`no release archive is made for ${process.platform}/${process.arch}; use version: source`);
  return { goos, goarch };
}

function releaseBase() {
  const custom = lib.input('release-url');
  if (custom) return custom.replace(/\/+$/, '');
  const repo = process.env.GITHUB_ACTION_REPOSITORY || 'mediamock/mediamock';
  return `https://github.com/${repo}/releases/download`;
}

// resolveLatest follows github.com/OWNER/REPO/releases/latest to its tag.
async function resolveLatest(base) {
  const m = /^(https:\/\/github\.com\/[^/]+\/[^/]+\/releases)\/download$/.exec(base);
  if (!m) throw new Failure('version: latest needs the default release-url (github.com); name the version instead');
  const res = await lib.request(`${m[1]}/latest`, { method: 'HEAD', follow: false });
  const tag = /\/releases\/tag\/([^/?#]+)$/.exec(res.headers.location || '');
  if (!tag) {
    throw new Failure(`${m[1]}/latest names no release (HTTP ${res.status}): nothing is published yet; ` +
      'use version: source (the default) until a release is published.');
  }
  return decodeURIComponent(tag[1]).replace(/^v/, '');
}

async function fetchRelease(url, what, version) {
  let res;
  try {
    res = await lib.request(url, { timeoutMs: 120000 });
  } catch (e) {
    throw new Failure(`cannot download the ${what} ${url}: ${e.message}`);
  }
  if (res.status === 404) {
    throw new Failure(`mediamock ${version} has no ${what} at ${url} (HTTP 404): is ${version} a published release? ` +
      'Nothing may be published yet: use version: source (the default, needs actions/setup-go) until a release is published.');
  }
  if (res.status !== 200) throw new Failure(`downloading the ${what} ${url}: HTTP ${res.status}`);
  return res.body;
}

// untar finds NAME in a tar stream (ustar, with pax and GNU long names).
function untar(buf, name) {
  let off = 0, longName = null;
  while (off + 512 <= buf.length) {
    const h = buf.subarray(off, off + 512);
    if (h.every((b) => b === 0)) break;
    const str = (a, b) => h.subarray(a, b).toString('utf8').replace(/\0.*$/s, '');
    const size = parseInt(str(124, 136).trim() || '0', 8);
    const type = String.fromCharCode(h[156] || 48);
    let entry = str(0, 100);
    const prefix = str(345, 500);
    if (prefix) entry = prefix + '/' + entry;
    const data = buf.subarray(off + 512, off + 512 + size);
    off += 512 + Math.ceil(size / 512) * 512;
    if (type === 'x') {
      const m = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(data.toString('utf8'));
      if (m) longName = m[1];
      continue;
    }
    if (type === 'L') { longName = data.toString('utf8').replace(/\0.*$/s, ''); continue; }
    if (longName) { entry = longName; longName = null; }
    if ((type === '0' || type === '\0') && path.posix.basename(entry) === name) return Buffer.from(data);
  }
  return null;
}

// unzip finds NAME in a zip archive (stored or deflated entries).
function unzip(buf, name) {
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 65557); i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) { eocd = i; break; }
  }
  if (eocd < 0) throw new Failure('the zip archive has no end of central directory');
  const count = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  for (let n = 0; n < count; n++) {
    if (buf.readUInt32LE(p) !== 0x02014b50) throw new Failure('the zip archive\'s central directory is damaged');
    const method = buf.readUInt16LE(p + 10);
    const csize = buf.readUInt32LE(p + 20);
    const nameLen = buf.readUInt16LE(p + 28), extraLen = buf.readUInt16LE(p + 30), commentLen = buf.readUInt16LE(p + 32);
    const local = buf.readUInt32LE(p + 42);
    const entry = buf.subarray(p + 46, p + 46 + nameLen).toString('utf8');
    p += 46 + nameLen + extraLen + commentLen;
    if (path.posix.basename(entry) !== name) continue;
    const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const data = buf.subarray(start, start + csize);
    if (method === 0) return Buffer.from(data);
    if (method === 8) return zlib.inflateRawSync(data);
    throw new Failure(`the zip entry ${entry} uses compression method ${method}`);
  }
  return null;
}

async function download(binDir, requested) {
  const base = releaseBase();
  let version = requested.replace(/^v/, '');
  if (version === 'latest') version = await resolveLatest(base);
  const { goos, goarch } = platform();
  const ext = goos === 'windows' ? 'zip' : 'tar.gz';
  const archive = `mediamock_${version}_${goos}_${goarch}.${ext}`;
  const sums = `mediamock_${version}_checksums.txt`;
  const dir = `${base}/v${version}`;
  lib.info(`Downloading ${dir}/${archive} and its checksums`);
  const sumsText = (await fetchRelease(`${dir}/${sums}`, 'checksums file', version)).toString('utf8');
  const line = sumsText.split(/\r?\n/).map((l) => l.trim().split(/\s+\*?/)).find((f) => f[1] === archive);
  if (!line || !/^[0-9a-f]{64}$/i.test(line[0])) throw new Failure(`${sums} lists no SHA-256 for ${archive}`);
  const body = await fetchRelease(`${dir}/${archive}`, 'release archive', version);
  const got = crypto.createHash('sha256').update(body).digest('hex');
  if (got !== line[0].toLowerCase()) {
    throw new Failure(`${archive} does not match ${sums}: SHA-256 ${got}, the release says ${line[0]}; refusing to run it`);
  }
  lib.info(`${archive}: SHA-256 ${got} matches ${sums}`);
  const exe = 'mockserver' + EXE;
  const data = ext === 'zip' ? unzip(body, exe) : untar(zlib.gunzipSync(body), exe);
  if (!data) throw new Failure(`${archive} holds no ${exe}`);
  const bin = path.join(binDir, exe);
  fs.writeFileSync(bin, data, { mode: 0o755 });
  return bin;
}

// ---- start and wait -----------------------------------------------------------

function apiKey(bin, fixtures, seed) {
  const args = ['keys'];
  if (fixtures) args.push('--fixtures', fixtures);
  if (seed) args.push('--seed', seed);
  const r = run(bin, args);
  if (r.status !== 0) {
    lib.warning(`mockserver keys failed (exit ${r.status}): ${(r.stderr || '').trim()}; the api-key output is empty`);
    return '';
  }
  const rows = r.stdout.split('\n').slice(1).map((l) => l.trim().split(/\s{2,}/)).filter((f) => f.length >= 2);
  const keys = rows.filter((f) => f[1] === 'api_key');
  const pick = keys.find((f) => f[0] === 'mk_test_all_scopes') ||
    keys.find((f) => ['read', 'generate', 'publish'].every((s) => (f[f.length - 1] || '').split(/\s+/).includes(s))) ||
    keys[0];
  return pick ? pick[0] : '';
}

// saveNow is `command: save`: the journal, the client report and the log of
// the server this job started on the port, saved at once, for an
// actions/upload-artifact step after it (the post step runs after every
// step of the job, too late for one).
async function saveNow(port) {
  lib.saveState('command', 'save');
  let started;
  try {
    started = JSON.parse(fs.readFileSync(lib.stateFile(port), 'utf8'));
  } catch (e) {
    throw new Failure(`command: save finds no server that this action started on port ${port} in this job (${e.code || e.message}); ` +
      'give it the port input of the start step');
  }
  lib.mask(started.token);
  const workspace = process.env.GITHUB_WORKSPACE || process.cwd();
  const dir = lib.input('artifacts-dir') ? path.resolve(workspace, lib.input('artifacts-dir')) : started.artifacts;
  const running = lib.alive(started.pid);
  if (!running) lib.warning(`mockserver (pid ${started.pid}) is not running any more; saving its log only:\n${lib.tail(started.log)}`);
  await lib.save(running ? started.url : '', started.token, dir, started.log);
  lib.setOutput('artifacts-dir', dir);
  lib.setOutput('url', started.url);
}

async function main() {
  const port = Number(lib.input('port'));
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Failure(`port: want 1 to 65535, got "${lib.input('port')}"`);
  const command = lib.input('command');
  if (command === 'save') return saveNow(port);
  if (command !== 'start') throw new Failure(`command: want start or save, got "${command}"`);
  const timeout = Number(lib.input('timeout'));
  if (!(timeout > 0)) throw new Failure(`timeout: want seconds above 0, got "${lib.input('timeout')}"`);
  const saveOn = lib.input('save-on');
  if (!['always', 'never'].includes(saveOn)) throw new Failure(`save-on: want always or never, got "${saveOn}"`);
  const extra = lib.splitArgs(lib.input('args'));
  for (const a of extra) {
    const flag = a.replace(/^--?/, '--').split('=')[0];
    if (a.startsWith('-') && OWN_FLAGS[flag]) throw new Failure(`args: ${flag} is set by the action (${OWN_FLAGS[flag]})`);
  }
  const workspace = process.env.GITHUB_WORKSPACE || process.cwd();
  let fixtures = lib.input('fixtures');
  if (fixtures) fixtures = path.resolve(workspace, fixtures);
  const clock = lib.input('clock');
  const seed = lib.input('seed');
  const token = lib.input('control-token');
  lib.mask(token);
  const artifacts = path.resolve(workspace, lib.input('artifacts-dir') || path.join(lib.tempDir(), 'mediamock'));

  if (!(await lib.portFree(port))) {
    throw new Failure(`port ${port} on 127.0.0.1 is taken: something else listens there; choose another port input`);
  }

  fs.mkdirSync(lib.tempDir(), { recursive: true });
  const home = fs.mkdtempSync(path.join(lib.tempDir(), 'mediamock-server-'));
  const binDir = path.join(home, 'bin');
  fs.mkdirSync(binDir);
  const version = lib.input('version') || 'source';
  const bin = version === 'source' ? buildFromSource(binDir) : await download(binDir, version);
  const v = run(bin, ['version']);
  lib.info((v.stdout || v.stderr || '').trim());

  const url = `http://127.0.0.1:${port}`;
  const log = path.join(home, 'server.log');
  const args = ['--addr', `127.0.0.1:${port}`, '--db', path.join(home, 'mediamock.db')];
  if (fixtures) args.push('--fixtures', fixtures);
  if (clock) args.push('--clock', clock);
  if (seed) args.push('--seed', seed);
  args.push(...extra);
  const env = {};
  for (const [k, val] of Object.entries(process.env)) if (!k.startsWith('INPUT_') && !k.startsWith('STATE_')) env[k] = val;
  if (token) env.MOCKSERVER_CONTROL_TOKEN = token;
  lib.info(`Starting ${bin} ${args.join(' ')}${token ? ' (control token in MOCKSERVER_CONTROL_TOKEN)' : ''}; log: ${log}`);
  const fd = fs.openSync(log, 'a');
  const child = childProcess.spawn(bin, args, { detached: true, stdio: ['ignore', fd, fd], env, cwd: home, windowsHide: true });
  fs.closeSync(fd);
  let exited = null;
  child.on('exit', (code, signal) => { exited = signal ? `signal ${signal}` : `exit code ${code}`; });
  child.on('error', (e) => { exited = e.message; });
  child.unref();
  // stop kills the server when the step fails after starting it, and waits:
  // the step leaves no process behind.
  const stop = async () => {
    if (exited !== null || !child.pid) return;
    try { process.kill(child.pid, 'SIGKILL'); } catch (_) { return; }
    for (let i = 0; i < 50 && exited === null; i++) await lib.sleep(100);
  };

  try {
    const t0 = Date.now();
    for (;;) {
      if (exited !== null) {
        throw new Failure(`mockserver stopped before it was healthy (${exited}): ${lib.tail(log, 5).split('\n').pop()}\n--- ${log}\n${lib.tail(log)}`);
      }
      let healthy = false;
      try {
        const res = await lib.request(`${url}/_mock/health`, { timeoutMs: 2000 });
        healthy = res.status === 200;
      } catch (_) { /* not listening yet */ }
      // An answer that came after the timeout is not one within it.
      if (Date.now() - t0 > timeout * 1000) {
        throw new Failure(`mockserver was not healthy at ${url}/_mock/health within ${timeout} s\n--- ${log}\n${lib.tail(log)}`);
      }
      if (healthy) break;
      await lib.sleep(100);
    }
    lib.info(`mockserver (pid ${child.pid}) is healthy at ${url} after ${Date.now() - t0} ms`);

    const key = apiKey(bin, fixtures, seed);
    lib.saveState('pid', child.pid);
    lib.saveState('port', port);
    lib.saveState('url', url);
    lib.saveState('bin', bin);
    lib.saveState('log', log);
    lib.saveState('artifacts-dir', artifacts);
    lib.saveState('save-on', saveOn);
    if (token) lib.saveState('control-token', token);
    fs.writeFileSync(lib.stateFile(port), JSON.stringify({ pid: child.pid, url, log, artifacts, token }), { mode: 0o600 });

    lib.setOutput('url', url);
    lib.setOutput('base-url', `${url}/api/v1`);
    lib.setOutput('api-key', key);
    lib.setOutput('control-token', token);
    lib.setOutput('artifacts-dir', artifacts);
    lib.setOutput('binary', bin);
    lib.setOutput('log', log);
    lib.setOutput('pid', child.pid);
    lib.exportVariable('MEDIAMOCK_URL', url);
    lib.addPath(binDir);
    lib.info(`url=${url} base-url=${url}/api/v1 api-key=${key || '(none)'}; MEDIAMOCK_URL set for the next steps, mockserver on PATH`);
  } catch (e) {
    await stop();
    throw e;
  }
}

if (require.main === module) {
  main().catch((e) => {
    if (e instanceof Failure) {
      // The annotation takes the first line; the details (a log, a build's
      // output) follow in the step's log as they are.
      const [first, ...rest] = e.message.split('\n');
      lib.error(first);
      if (rest.length) lib.info(rest.join('\n'));
    } else {
      lib.error(`mediamock action: ${e.stack || e}`);
    }
    process.exitCode = 1;
  });
}

// For scripts/action-check, which tries the archive readers on archives of its own.
module.exports = { untar, unzip };
