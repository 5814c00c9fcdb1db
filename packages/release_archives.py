#!/usr/bin/env python3
"""Archives of a release: one per binary (tar.gz; zip for windows) with the
binary, LICENSE and README.md, and a checksums file in sha256sum's format.
Reproducible: fixed order, owner and time (SOURCE_DATE_EPOCH, else the last
commit's time). Standard library only; scripts/release calls it."""
import argparse
import gzip
import hashlib
import io
import json
import os
import subprocess
import tarfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))


def epoch():
    if os.environ.get("SOURCE_DATE_EPOCH"):
        return int(os.environ["SOURCE_DATE_EPOCH"])
    try:
        return int(subprocess.check_output(["git", "log", "-1", "--format=%ct"], cwd=HERE, text=True).strip())
    except (OSError, subprocess.CalledProcessError, ValueError):
        return 315532800  # 1980-01-01, the first time a zip can hold


def tar_gz(path, files, mtime):
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, src, mode in files:
            info = tarfile.TarInfo(name)
            info.size = os.path.getsize(src)
            info.mode, info.mtime, info.uid, info.gid, info.uname, info.gname = mode, mtime, 0, 0, "", ""
            with open(src, "rb") as f:
                tar.addfile(info, f)
    with open(path, "wb") as f, gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=mtime, compresslevel=6) as gz:
        gz.write(raw.getvalue())


def zip_file(path, files, mtime):
    stamp = time.gmtime(max(mtime, 315532800))[:6]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for name, src, mode in files:
            info = zipfile.ZipInfo(name, stamp)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o100000 | mode) << 16
            with open(src, "rb") as f:
                z.writestr(info, f.read())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--version", required=True)
    ap.add_argument("--bins", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--readme", required=True)
    ap.add_argument("--license", required=True)
    args = ap.parse_args()
    with open(os.path.join(HERE, "platforms.json")) as f:
        platforms = json.load(f)["platforms"]
    mtime = epoch()
    made = []
    for p in platforms:
        exe = "mockserver.exe" if p["goos"] == "windows" else "mockserver"
        src = os.path.join(args.bins, "mockserver-%s-%s%s" % (p["goos"], p["goarch"], ".exe" if p["goos"] == "windows" else ""))
        if not os.path.exists(src):
            continue
        stem = "mediamock_%s_%s_%s" % (args.version, p["goos"], p["goarch"])
        files = [(stem + "/" + exe, src, 0o755), (stem + "/LICENSE", args.license, 0o644), (stem + "/README.md", args.readme, 0o644)]
        if p["goos"] == "windows":
            name = stem + ".zip"
            zip_file(os.path.join(args.out, name), files, mtime)
        else:
            name = stem + ".tar.gz"
            tar_gz(os.path.join(args.out, name), files, mtime)
        made.append(name)
    sums = "mediamock_%s_checksums.txt" % args.version
    with open(os.path.join(args.out, sums), "w") as out:
        for name in sorted(made):
            h = hashlib.sha256()
            with open(os.path.join(args.out, name), "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
            out.write("%s  %s\n" % (h.hexdigest(), name))
    for name in sorted(made) + [sums]:
        print("   %-48s %10d bytes" % (name, os.path.getsize(os.path.join(args.out, name))))


if __name__ == "__main__":
    main()
