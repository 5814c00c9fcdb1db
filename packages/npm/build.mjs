// Builds the npm packages of a release: @mediamock/server (the helper,
// compiled with its types generated from openapi.json and control.json) and
// one @mediamock/server-<platform> per binary found, then packs each.
//
//   node packages/npm/build.mjs --version 1.2.3 --bins DIR --out DIR
//
// DIR of --bins holds mockserver-<goos>-<goarch>[.exe]; platforms without a
// binary there get no package. The packed tarballs are also copied to
// DIR/local/ without the version in their names. scripts/release calls it.
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "../..");
const { values: opt } = parseArgs({ options: { version: { type: "string" }, bins: { type: "string" }, out: { type: "string" } } });
if (!opt.version || !opt.bins || !opt.out) throw new Error("usage: build.mjs --version V --bins DIR --out DIR");
const version = opt.version;
const out = resolve(opt.out);
const src = join(here, "server");
const { platforms } = JSON.parse(readFileSync(join(repo, "packages/platforms.json"), "utf8"));
const run = (cmd, args, cwd) => {
  try {
    return execFileSync(cmd, args, { cwd, stdio: ["ignore", "pipe", "inherit"] }).toString();
  } catch (err) {
    process.stderr.write(`build.mjs: ${cmd} ${args.join(" ")} failed:\n${err.stdout ?? ""}`);
    process.exit(1);
  }
};

// 1. Types from the two documents, the platform table, then the compiler.
const gen = join(src, "src/generated");
rmSync(gen, { recursive: true, force: true });
mkdirSync(gen, { recursive: true });
const oat = join(src, "node_modules/.bin/openapi-typescript");
run(oat, [join(repo, "openapi.json"), "-o", join(gen, "api.ts"), "--default-non-nullable", "false", "--silent"], src);
run(oat, [join(repo, "control.json"), "-o", join(gen, "control.ts"), "--default-non-nullable", "false", "--silent"], src);
writeFileSync(join(gen, "platforms.ts"),
  "// Generated from packages/platforms.json by packages/npm/build.mjs.\n" +
  `export const PLATFORMS: ReadonlyArray<{ npm: string; os: string; cpu: string }> = ${JSON.stringify(
    platforms.map((p) => ({ npm: p.npm, os: p.os, cpu: p.cpu })), null, 2)};\n`);
rmSync(join(src, "dist"), { recursive: true, force: true });
run(join(src, "node_modules/.bin/tsc"), ["-p", "tsconfig.json"], src);

// 2. Stage and pack each package.
const stage = join(out, "npm-stage");
rmSync(stage, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const packed = [];
const pack = (dir) => {
  const res = JSON.parse(run("npm", ["pack", "--json", "--silent", "--pack-destination", out], dir));
  packed.push({ file: res[0].filename, size: res[0].size, unpacked: res[0].unpackedSize });
};
const base = JSON.parse(readFileSync(join(src, "package.json"), "utf8"));
const license = join(repo, "LICENSE");

const withBinary = [];
for (const p of platforms) {
  const exe = p.goos === "windows" ? "mockserver.exe" : "mockserver";
  const bin = join(opt.bins, `mockserver-${p.goos}-${p.goarch}${p.goos === "windows" ? ".exe" : ""}`);
  if (!existsSync(bin)) continue;
  withBinary.push(p);
  const name = `${base.name}-${p.npm}`;
  const dir = join(stage, p.npm);
  mkdirSync(join(dir, "bin"), { recursive: true });
  copyFileSync(bin, join(dir, "bin", exe));
  chmodSync(join(dir, "bin", exe), 0o755);
  copyFileSync(license, join(dir, "LICENSE"));
  writeFileSync(join(dir, "README.md"),
    `# ${name}\n\nThe \`mockserver\` binary of mediamock ${version} for ${p.npm} (${p.goos}/${p.goarch}).\n\n` +
    `Install [\`${base.name}\`](https://www.npmjs.com/package/${base.name}) instead: it depends on this package ` +
    `on ${p.npm} only, and runs the binary for you.\n`);
  writeFileSync(join(dir, "package.json"), JSON.stringify({
    name, version,
    description: `The mediamock mockserver binary for ${p.npm}.`,
    license: base.license, repository: base.repository,
    os: [p.os], cpu: [p.cpu],
    files: ["bin", "README.md", "LICENSE"],
    preferUnplugged: true,
  }, null, 2) + "\n");
  pack(dir);
}

const main = join(stage, "server");
mkdirSync(main, { recursive: true });
cpSync(join(src, "dist"), join(main, "dist"), { recursive: true });
cpSync(join(src, "bin"), join(main, "bin"), { recursive: true });
copyFileSync(join(src, "README.md"), join(main, "README.md"));
copyFileSync(license, join(main, "LICENSE"));
const { scripts, devDependencies, ...rest } = base;
writeFileSync(join(main, "package.json"), JSON.stringify({
  ...rest, version,
  // Every platform's package, whether this build made it or not: npm
  // installs the one whose os and cpu match, and skips the others.
  optionalDependencies: Object.fromEntries(platforms.map((p) => [`${base.name}-${p.npm}`, version])),
}, null, 2) + "\n");
pack(main);

// 3. The same tarballs under names without the version, in local/, for a
// project that installs this build by a fixed path (examples/typescript's
// package.json: file:../../dist/npm/local/mediamock-server.tgz, and one
// optional file: dependency per platform).
const local = join(out, "local");
rmSync(local, { recursive: true, force: true });
mkdirSync(local, { recursive: true });
for (const p of packed) copyFileSync(join(out, p.file), join(local, p.file.replace(`-${version}.tgz`, ".tgz")));

for (const p of packed) console.log(`${p.file}\t${p.size}\t${p.unpacked}`);
