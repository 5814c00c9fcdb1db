#!/usr/bin/env python3
"""Builds the Python wheels of a release with the standard library only: one
platform wheel per binary found, each carrying the ``mediamock`` package and
its ``mockserver`` binary (``mediamock/bin/``).

    python3 packages/python/build_wheels.py --version 1.2.3 --bins DIR --out DIR

A wheel is a zip: the package's files, then ``mediamock-V.dist-info/`` with
METADATA, WHEEL (its tags), entry_points.txt (the ``mockserver`` command and
the pytest plugin), LICENSE and RECORD (every file's SHA-256 and size).
Reproducible: fixed order, modes and times. scripts/release calls it.
"""
import argparse
import base64
import hashlib
import json
import os
import re
import subprocess
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
NAME = "mediamock"
SUMMARY = ("A stateful mock of the media generation service's REST API v1, with its server binary, "
           "a pytest plugin and a typed control client")


def pep440(semver):
    """1.2.3 -> 1.2.3; 1.2.3-dev -> 1.2.3.dev0; -alpha.N/-beta.N/-rc.N -> aN/bN/rcN."""
    m = re.fullmatch(r"(\d+\.\d+\.\d+)(?:-(dev|alpha\.(\d+)|beta\.(\d+)|rc\.(\d+)))?", semver)
    if not m:
        raise SystemExit("build_wheels: version %r is not X.Y.Z[-dev|-alpha.N|-beta.N|-rc.N]" % semver)
    base, pre, a, b, rc = m.groups()
    if pre is None:
        return base
    if pre == "dev":
        return base + ".dev0"
    return base + ("a" + a if a else "b" + b if b else "rc" + rc)


def epoch():
    if os.environ.get("SOURCE_DATE_EPOCH"):
        return int(os.environ["SOURCE_DATE_EPOCH"])
    try:
        return int(subprocess.check_output(["git", "log", "-1", "--format=%ct"], cwd=HERE, text=True).strip())
    except (OSError, subprocess.CalledProcessError, ValueError):
        return 315532800


def digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def metadata(version):
    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    head = [
        "Metadata-Version: 2.1",
        "Name: " + NAME,
        "Version: " + version,
        "Summary: " + SUMMARY,
        "Home-page: https://github.com/mediamock/mediamock",
        "License: MIT",
        "Project-URL: Source, https://github.com/mediamock/mediamock",
        "Keywords: mock,mock-server,testing,openapi,pytest",
        "Classifier: Framework :: Pytest",
        "Classifier: License :: OSI Approved :: MIT License",
        "Classifier: Programming Language :: Python :: 3",
        "Classifier: Topic :: Software Development :: Testing :: Mocking",
        "Classifier: Typing :: Typed",
        "Requires-Python: >=3.9",
        "Description-Content-Type: text/markdown",
    ]
    return ("\n".join(head) + "\n\n" + readme).encode()


def build(version, platform, binary, out, mtime):
    tags = platform["wheel"].split(".")
    wheel_name = "%s-%s-py3-none-%s.whl" % (NAME, version, platform["wheel"])
    dist_info = "%s-%s.dist-info" % (NAME, version)
    exe = "mockserver.exe" if platform["goos"] == "windows" else "mockserver"
    files = []  # (archive name, bytes, mode)
    src = os.path.join(HERE, NAME)
    for name in sorted(os.listdir(src)):
        if name.endswith(".py") or name == "py.typed":
            with open(os.path.join(src, name), "rb") as f:
                files.append(("%s/%s" % (NAME, name), f.read(), 0o644))
    go_platform = "%s-%s" % (platform["goos"], platform["goarch"])
    files.append(("%s/_platform.py" % NAME, (
        "# Written by build_wheels.py: the platform of this wheel's binary.\n"
        "PLATFORM = %r\nWHEEL_TAG = %r\n" % (go_platform, tags[0])).encode(), 0o644))
    with open(binary, "rb") as f:
        files.append(("%s/bin/%s" % (NAME, exe), f.read(), 0o755))
    files.append((dist_info + "/METADATA", metadata(version), 0o644))
    files.append((dist_info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: mediamock build_wheels.py\n"
                                         "Root-Is-Purelib: false\n"
                                         + "".join("Tag: py3-none-%s\n" % t for t in tags)).encode(), 0o644))
    files.append((dist_info + "/entry_points.txt", (
        "[console_scripts]\nmockserver = mediamock.__main__:main\n\n"
        "[pytest11]\nmediamock = mediamock.pytest_plugin\n").encode(), 0o644))
    with open(os.path.join(REPO, "LICENSE"), "rb") as f:
        files.append((dist_info + "/LICENSE", f.read(), 0o644))
    record = "".join("%s,%s,%d\n" % (name, digest(data), len(data)) for name, data, _ in files)
    record += dist_info + "/RECORD,,\n"
    files.append((dist_info + "/RECORD", record.encode(), 0o644))

    stamp = time.gmtime(max(mtime, 315532800))[:6]
    path = os.path.join(out, wheel_name)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for name, data, mode in files:
            info = zipfile.ZipInfo(name, stamp)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o100000 | mode) << 16
            z.writestr(info, data)
    return path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--version", required=True, help="the release's version (semantic versioning, from VERSION)")
    ap.add_argument("--bins", required=True, help="folder of mockserver-<goos>-<goarch>[.exe]")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    with open(os.path.join(REPO, "packages", "platforms.json")) as f:
        platforms = json.load(f)["platforms"]
    version = pep440(args.version)
    os.makedirs(args.out, exist_ok=True)
    mtime = epoch()
    for p in platforms:
        binary = os.path.join(args.bins, "mockserver-%s-%s%s" % (p["goos"], p["goarch"], ".exe" if p["goos"] == "windows" else ""))
        if os.path.exists(binary):
            path = build(version, p, binary, args.out, mtime)
            print("%s\t%d" % (os.path.basename(path), os.path.getsize(path)))


if __name__ == "__main__":
    main()
