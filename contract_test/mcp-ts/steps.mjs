// The checks' steps: each prints one line, ok or FAIL with the error, and
// done prints the count and exits non-zero when a step failed.
let passed = 0;
let failed = 0;

export async function step(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok   ${name}`);
  } catch (err) {
    failed++;
    console.log(`FAIL ${name}: ${err?.stack ?? err}`);
  }
}

export function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

export function done(what) {
  console.log(`${what}: ${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}
