#!/usr/bin/env python3
"""Checks the artifacts scripts/release made, without running them:

- the checksums file matches every archive;
- every binary (in its archive, its npm package and its wheel) is an
  executable of its own OS and CPU (ELF, Mach-O or PE header), static on
  Linux (no program interpreter), with mode 755 where modes exist;
- every package carries the one version (VERSION; PEP 440 for the wheels);
- @mediamock/server lists every platform package at that version as an
  optional dependency, and ships its compiled helper with the types
  generated from openapi.json and control.json;
- every wheel's RECORD matches its files, its tags are its platform's, and
  it declares the mockserver command and the pytest plugin.

Standard library only. Usage: check_artifacts.py --dist DIR --version V
"""
import argparse
import base64
import hashlib
import io
import json
import os
import re
import struct
import sys
import tarfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "python"))
from build_wheels import pep440  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def binary_kind(data):
    """(os, arch, static) of an executable's header, or None."""
    if data[:4] == b"\x7fELF":
        machine = struct.unpack_from("<H", data, 18)[0]
        arch = {62: "amd64", 183: "arm64"}.get(machine, "machine %d" % machine)
        phoff = struct.unpack_from("<Q", data, 32)[0]
        phentsize, phnum = struct.unpack_from("<HH", data, 54)
        interp = any(struct.unpack_from("<I", data, phoff + i * phentsize)[0] == 3 for i in range(phnum))
        return "linux", arch, not interp
    if data[:4] == b"\xcf\xfa\xed\xfe":
        cpu = struct.unpack_from("<I", data, 4)[0]
        return "darwin", {0x01000007: "amd64", 0x0100000C: "arm64"}.get(cpu, "cpu %#x" % cpu), True
    if data[:2] == b"MZ":
        pe = struct.unpack_from("<I", data, 0x3C)[0]
        if data[pe:pe + 4] == b"PE\0\0":
            machine = struct.unpack_from("<H", data, pe + 4)[0]
            return "windows", {0x8664: "amd64", 0xAA64: "arm64"}.get(machine, "machine %#x" % machine), True
    return None


def check_binary(where, data, goos, goarch, mode=None):
    kind = binary_kind(data)
    if not check(kind is not None, "%s: not an executable" % where):
        return
    check(kind[:2] == (goos, goarch), "%s: a %s/%s binary, not %s/%s" % (where, kind[0], kind[1], goos, goarch))
    check(kind[2], "%s: dynamically linked (has a program interpreter)" % where)
    if mode is not None and goos != "windows":
        check(mode & 0o111 == 0o111, "%s: mode %o, not executable" % (where, mode))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dist", required=True)
    ap.add_argument("--version", required=True)
    args = ap.parse_args()
    dist, version = args.dist, args.version
    with open(os.path.join(HERE, "platforms.json")) as f:
        platforms = json.load(f)["platforms"]
    built = [p for p in platforms if os.path.exists(os.path.join(
        dist, "bin", "mockserver-%s-%s%s" % (p["goos"], p["goarch"], ".exe" if p["goos"] == "windows" else "")))]
    check(built, "no binaries in %s/bin" % dist)
    lines = []

    # Archives and checksums.
    sums_path = os.path.join(dist, "mediamock_%s_checksums.txt" % version)
    sums = {}
    if check(os.path.exists(sums_path), "no checksums file %s" % sums_path):
        for line in open(sums_path):
            digest, name = line.split()
            sums[name] = digest
    for p in built:
        exe = "mockserver.exe" if p["goos"] == "windows" else "mockserver"
        stem = "mediamock_%s_%s_%s" % (version, p["goos"], p["goarch"])
        name = stem + (".zip" if p["goos"] == "windows" else ".tar.gz")
        path = os.path.join(dist, name)
        if not check(os.path.exists(path), "no archive %s" % name):
            continue
        with open(path, "rb") as f:
            raw = f.read()
        check(sums.get(name) == hashlib.sha256(raw).hexdigest(), "%s: checksum differs from the checksums file" % name)
        if name.endswith(".zip"):
            with zipfile.ZipFile(io.BytesIO(raw)) as z:
                names = sorted(z.namelist())
                data = z.read(stem + "/" + exe)
                mode = None
        else:
            with tarfile.open(fileobj=io.BytesIO(raw)) as t:
                names = sorted(t.getnames())
                member = t.getmember(stem + "/" + exe)
                data, mode = t.extractfile(member).read(), member.mode
        check(names == sorted([stem + "/" + exe, stem + "/LICENSE", stem + "/README.md"]), "%s holds %s" % (name, names))
        check_binary(name, data, p["goos"], p["goarch"], mode)
        check(("mockserver %s" % version).encode() in data or version.encode() in data,
              "%s: the version %s is not stamped in the binary" % (name, version))
        lines.append("archive  %-52s %9d bytes" % (name, len(raw)))

    # npm packages.
    def npm_tarball(name):
        path = os.path.join(dist, "npm", "%s-%s.tgz" % (name.replace("@", "").replace("/", "-"), version))
        if not check(os.path.exists(path), "no npm package %s" % path):
            return None, None
        t = tarfile.open(path)
        return t, os.path.getsize(path)

    t, size = npm_tarball("@mediamock/server")
    if t:
        pkg = json.load(t.extractfile("package/package.json"))
        check(pkg["version"] == version, "@mediamock/server: version %s" % pkg["version"])
        want = {"@mediamock/server-" + p["npm"]: version for p in platforms}
        check(pkg.get("optionalDependencies") == want, "@mediamock/server: optionalDependencies %s" % pkg.get("optionalDependencies"))
        check("devDependencies" not in pkg and "dependencies" not in pkg, "@mediamock/server: has dependencies to install")
        names = set(t.getnames())
        for f in ("dist/index.js", "dist/index.d.ts", "dist/generated/api.d.ts", "dist/generated/control.d.ts", "bin/mockserver.js", "README.md", "LICENSE"):
            check("package/" + f in names, "@mediamock/server lacks %s" % f)
        api = t.extractfile("package/dist/generated/api.d.ts").read().decode()
        check("auto-generated by openapi-typescript" in api and '"/generations"' in api, "api.d.ts is not openapi-typescript's")
        lines.append("npm      %-52s %9d bytes" % ("@mediamock/server", size))
    for p in built:
        name = "@mediamock/server-" + p["npm"]
        t, size = npm_tarball(name)
        if not t:
            continue
        pkg = json.load(t.extractfile("package/package.json"))
        check(pkg["version"] == version and pkg["os"] == [p["os"]] and pkg["cpu"] == [p["cpu"]],
              "%s: version/os/cpu %s %s %s" % (name, pkg["version"], pkg["os"], pkg["cpu"]))
        exe = "mockserver.exe" if p["goos"] == "windows" else "mockserver"
        member = t.getmember("package/bin/" + exe)
        check_binary(name, t.extractfile(member).read(), p["goos"], p["goarch"], member.mode)
        lines.append("npm      %-52s %9d bytes" % (name, size))

    # Wheels.
    pyver = pep440(version)
    for p in built:
        name = "mediamock-%s-py3-none-%s.whl" % (pyver, p["wheel"])
        path = os.path.join(dist, "python", name)
        if not check(os.path.exists(path), "no wheel %s" % name):
            continue
        info = "mediamock-%s.dist-info/" % pyver
        with zipfile.ZipFile(path) as z:
            record = z.read(info + "RECORD").decode().splitlines()
            listed = set()
            for row in record:
                fname, digest, length = row.rsplit(",", 2)
                listed.add(fname)
                if fname == info + "RECORD":
                    continue
                data = z.read(fname)
                want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                check(digest == want and int(length) == len(data), "%s: RECORD is wrong for %s" % (name, fname))
            check(listed == set(z.namelist()), "%s: RECORD does not list exactly its files" % name)
            meta = z.read(info + "METADATA").decode()
            check(re.search(r"^Version: %s$" % re.escape(pyver), meta, re.M), "%s: METADATA's version" % name)
            wheel = z.read(info + "WHEEL").decode()
            tags = re.findall(r"^Tag: (.+)$", wheel, re.M)
            check(tags == ["py3-none-" + t for t in p["wheel"].split(".")], "%s: tags %s" % (name, tags))
            check("Root-Is-Purelib: false" in wheel, "%s: not a platform wheel" % name)
            entry = z.read(info + "entry_points.txt").decode()
            check("mockserver = mediamock.__main__:main" in entry and "mediamock = mediamock.pytest_plugin" in entry,
                  "%s: entry points %r" % (name, entry))
            exe = "mockserver.exe" if p["goos"] == "windows" else "mockserver"
            zi = z.getinfo("mediamock/bin/" + exe)
            check_binary(name, z.read(zi), p["goos"], p["goarch"], zi.external_attr >> 16)
            plat = z.read("mediamock/_platform.py").decode()
            check("PLATFORM = '%s-%s'" % (p["goos"], p["goarch"]) in plat, "%s: _platform.py says %r" % (name, plat))
        lines.append("wheel    %-52s %9d bytes" % (name[:52], os.path.getsize(path)))

    for line in lines:
        print("   " + line)
    if failures:
        for f in failures:
            print("FAIL  " + f)
        sys.exit(1)
    print("   artifacts: %d platforms, version %s (wheels %s): ok" % (len(built), version, pyver))


if __name__ == "__main__":
    main()
