'use strict';
// Shared by action/main.js and action/post.js: the runner's file commands
// (GITHUB_OUTPUT, GITHUB_ENV, GITHUB_STATE, GITHUB_PATH), inputs (INPUT_<NAME>,
// with action.yml's defaults when the variable is absent), HTTP without
// dependencies, and process and port checks. Node built-ins only: the action
// runs from its checkout, with nothing installed or bundled.

const crypto = require('crypto');
const fs = require('fs');
const http = require('http');
const https = require('https');
const net = require('net');
const os = require('os');
const path = require('path');

const ROOT = path.resolve(__dirname, '..');

// parseMetadata reads action.yml, whose subset this repository keeps to:
// nested mappings of single-line scalars (plain, 'single' or "double"
// quoted), comments and blank lines. No lists, no block scalars.
function parseMetadata(text) {
  const root = {};
  const stack = [{ indent: -1, obj: root }];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.replace(/\s+#.*$/, '');
    if (!line.trim() || line.trim().startsWith('#')) return;
    const indent = line.length - line.trimStart().length;
    const m = /^([A-Za-z0-9_-]+):(?:\s+(.*))?$/.exec(line.trim());
    if (!m) throw new Error(`action.yml:${i + 1}: not a "key: value" line: ${raw.trim()}`);
    while (stack[stack.length - 1].indent >= indent) stack.pop();
    const parent = stack[stack.length - 1].obj;
    if (Object.prototype.hasOwnProperty.call(parent, m[1])) throw new Error(`action.yml:${i + 1}: duplicate key ${m[1]}`);
    if (m[2] === undefined || m[2] === '') {
      parent[m[1]] = {};
      stack.push({ indent, obj: parent[m[1]] });
      return;
    }
    let v = m[2].trim();
    if (/^'.*'$/.test(v)) v = v.slice(1, -1).replace(/''/g, "'");
    else if (/^".*"$/.test(v)) v = JSON.parse(v);
    else if (/^[[{|>]/.test(v)) throw new Error(`action.yml:${i + 1}: lists and block scalars are not in the subset: ${raw.trim()}`);
    parent[m[1]] = v;
  });
  return root;
}

let metadataCache;
function metadata() {
  if (!metadataCache) metadataCache = parseMetadata(fs.readFileSync(path.join(ROOT, 'action.yml'), 'utf8'));
  return metadataCache;
}

// inputEnvName is the runner's rule: spaces become underscores, the name is
// upper-cased, hyphens stay (INPUT_CONTROL-TOKEN).
function inputEnvName(name) {
  return 'INPUT_' + name.replace(/ /g, '_').toUpperCase();
}

// input returns the input's value, trimmed; when the runner did not set the
// variable (a local run), action.yml's default. Undeclared names throw: the
// check keeps the scripts and action.yml in step.
function input(name) {
  const declared = (metadata().inputs || {})[name];
  if (!declared) throw new Error(`input ${name} is not declared in action.yml`);
  const v = process.env[inputEnvName(name)];
  if (v !== undefined) return v.trim();
  return declared.default === undefined ? '' : String(declared.default).trim();
}

// fileCommand appends NAME<<DELIMITER\nVALUE\nDELIMITER to the runner's file.
function fileCommand(envName, name, value) {
  const file = process.env[envName];
  value = String(value);
  if (!file) {
    console.log(`(${envName} is not set) ${name}=${value}`);
    return;
  }
  const delim = `ghadelimiter_${crypto.randomUUID()}`;
  if (name.includes(delim) || value.includes(delim)) throw new Error('unexpected delimiter in a value');
  fs.appendFileSync(file, `${name}<<${delim}${os.EOL}${value}${os.EOL}${delim}${os.EOL}`);
}
const setOutput = (name, value) => fileCommand('GITHUB_OUTPUT', name, value);
const exportVariable = (name, value) => {
  process.env[name] = String(value);
  fileCommand('GITHUB_ENV', name, value);
};
const saveState = (name, value) => fileCommand('GITHUB_STATE', name, value);
const getState = (name) => process.env[`STATE_${name}`] || '';
function addPath(dir) {
  if (process.env.GITHUB_PATH) fs.appendFileSync(process.env.GITHUB_PATH, dir + os.EOL);
  process.env.PATH = dir + path.delimiter + process.env.PATH;
}

// Workflow commands on stdout.
const escapeData = (s) => String(s).replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
const info = (msg) => console.log(msg);
const warning = (msg) => console.log(`::warning::${escapeData(msg)}`);
const error = (msg) => console.log(`::error::${escapeData(msg)}`);
const mask = (secret) => { if (secret) console.log(`::add-mask::${escapeData(secret)}`); };
const group = (title) => console.log(`::group::${escapeData(title)}`);
const endGroup = () => console.log('::endgroup::');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function tempDir() {
  return process.env.RUNNER_TEMP || os.tmpdir();
}

// request sends one GET (or HEAD) and returns {status, headers, body}.
// Redirects are followed up to 5 times unless follow is false.
function request(url, { method = 'GET', headers = {}, timeoutMs = 30000, follow = true } = {}, hops = 0) {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const mod = u.protocol === 'https:' ? https : http;
    const req = mod.request(u, { method, headers: { 'User-Agent': 'mediamock-action', ...headers } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const loc = res.headers.location;
        if (follow && loc && [301, 302, 303, 307, 308].includes(res.statusCode)) {
          if (hops >= 5) return reject(new Error(`too many redirects from ${url}`));
          // Credentials stay with the first host.
          const next = new URL(loc, u);
          const h = next.host === u.host ? headers : {};
          return resolve(request(next.toString(), { method, headers: h, timeoutMs, follow }, hops + 1));
        }
        resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) });
      });
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer from ${url} within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

// alive tells whether pid runs: a zombie (exited, not yet reaped by
// whoever adopted it) counts as gone.
function alive(pid) {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return e.code === 'EPERM';
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (state === 'Z' || state === 'X') return false;
  } catch (_) {
    // no /proc (macOS, Windows), or gone between the calls
  }
  return true;
}

// portFree tells whether nothing listens on 127.0.0.1:port: a listener of
// our own can bind it.
function portFree(port) {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host: '127.0.0.1', exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

// splitArgs splits the args input like a shell would, without expansion:
// whitespace (newlines too) separates, quotes group, backslash escapes.
function splitArgs(s) {
  const out = [];
  let cur = '', has = false, quote = null;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (quote) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"' && i + 1 < s.length && /["\\$`]/.test(s[i + 1])) cur += s[++i];
      else cur += c;
    } else if (c === '"' || c === "'") {
      quote = c; has = true;
    } else if (c === '\\' && i + 1 < s.length) {
      cur += s[++i]; has = true;
    } else if (/\s/.test(c)) {
      if (has) out.push(cur);
      cur = ''; has = false;
    } else {
      cur += c; has = true;
    }
  }
  if (quote) throw new Error(`args: unclosed ${quote}`);
  if (has) out.push(cur);
  return out;
}

function tail(file, lines = 40) {
  try {
    const text = fs.readFileSync(file, 'utf8').trimEnd();
    return text.split('\n').slice(-lines).join('\n');
  } catch (e) {
    return `(cannot read ${file}: ${e.message})`;
  }
}

// stateFile is where the start step leaves what a later `command: save`
// step of the same job needs (the runner's state reaches only the post step).
function stateFile(port) {
  return path.join(tempDir(), `mediamock-${port}.json`);
}

// save writes the journal and the client report (JSON and JUnit XML) when
// url is set, and a copy of the server log, into dir; prints the report's
// text form into the log and a line into the job summary. Failures to fetch
// are warnings: saving never fails a step.
async function save(url, token, dir, log) {
  fs.mkdirSync(dir, { recursive: true });
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const files = [
    ['journal.json', '/_mock/journal?limit=100000'],
    ['report.json', '/_mock/report?format=json'],
    ['report.xml', '/_mock/report?format=junit'],
    [null, '/_mock/report?format=text'],
  ];
  const saved = [];
  for (const [name, p] of url ? files : []) {
    try {
      const res = await request(url + p, { headers, timeoutMs: 30000 });
      if (res.status !== 200) {
        warning(`GET ${p}: HTTP ${res.status}: ${res.body.toString('utf8').slice(0, 300)}`);
        continue;
      }
      if (!name) {
        group('mediamock client report');
        info(res.body.toString('utf8').trimEnd());
        endGroup();
        continue;
      }
      fs.writeFileSync(path.join(dir, name), res.body);
      saved.push(name);
      if (name === 'report.json' && process.env.GITHUB_STEP_SUMMARY) {
        try {
          const r = JSON.parse(res.body.toString('utf8'));
          const findings = Array.isArray(r.findings) ? r.findings : [];
          const rows = findings.map((f) => `| \`${f.id}\` | ${f.severity} | ${f.count} |`).join('\n');
          fs.appendFileSync(process.env.GITHUB_STEP_SUMMARY, `### mediamock client report\n\n${findings.length} finding(s) over ` +
            `${(r.summary || {}).requests} request(s).\n${rows ? `\n| finding | severity | count |\n|---|---|---|\n${rows}\n` : ''}\n`);
        } catch (_) { /* the file is saved; the summary is a courtesy */ }
      }
    } catch (e) {
      warning(`GET ${p}: ${e.message}`);
    }
  }
  if (log && fs.existsSync(log)) {
    fs.copyFileSync(log, path.join(dir, 'server.log'));
    saved.push('server.log');
  }
  info(`mediamock files in ${dir}: ${saved.join(', ') || 'none'}`);
  return saved;
}

module.exports = {
  ROOT, parseMetadata, metadata, inputEnvName, input, setOutput, exportVariable, saveState, getState, addPath,
  info, warning, error, mask, group, endGroup, sleep, tempDir, request, alive, portFree, splitArgs, tail, save, stateFile,
};
