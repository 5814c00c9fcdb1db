#!/usr/bin/env node
// `npx mockserver ...`: runs this platform's mockserver binary with the
// arguments given, passes signals on, and exits as it exits.
"use strict";
const { spawn } = require("node:child_process");
let bin;
try {
  bin = require("../dist/platform.js").resolveBinary();
} catch (err) {
  console.error(`mockserver: ${err.message}`);
  process.exit(1);
}
const child = spawn(bin, process.argv.slice(2), { stdio: "inherit" });
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(sig, () => child.kill(sig));
}
child.on("error", (err) => {
  console.error(`mockserver: cannot run ${bin}: ${err.message}`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  }
  process.exit(code ?? 1);
});
