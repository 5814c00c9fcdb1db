#!/usr/bin/env python3
"""A CycloneDX 1.5 SBOM (JSON) for each release binary: the Go modules and
the Go standard library linked into it, read from the binary's own build
information (`go version -m -json`), so it lists what the binary holds, not
what go.mod names. Reproducible: the serial number is derived from the
binary's name and version, the time from SOURCE_DATE_EPOCH (else the last
commit's). Standard library only; scripts/release calls it.

    python3 packages/sbom.py --version 1.2.3 --bins dist/bin --out dist
"""
import argparse
import json
import os
import subprocess
import time
import uuid

from release_archives import epoch  # the archives' time: SOURCE_DATE_EPOCH, else the last commit's


def purl(path, version):
    return "pkg:golang/%s@%s" % (path, version)


def sbom(binary, version, stamp):
    info = json.loads(subprocess.check_output(["go", "version", "-m", "-json", binary], text=True))
    name = os.path.basename(binary)
    main = {"type": "application", "bom-ref": "mockserver", "name": "mockserver", "version": version,
            "purl": purl(info["Main"]["Path"], "v" + version),
            "properties": [{"name": "go:package", "value": info["Path"]}, {"name": "file", "value": name}]}
    components = [{"type": "library", "bom-ref": "stdlib", "name": "stdlib", "version": info["GoVersion"],
                   "purl": purl("stdlib", info["GoVersion"])}]
    for dep in info.get("Deps") or []:
        mod = dep.get("Replace") or dep
        c = {"type": "library", "bom-ref": dep["Path"], "name": dep["Path"], "version": mod["Version"],
             "purl": purl(mod["Path"], mod["Version"])}
        if mod.get("Sum"):
            c["properties"] = [{"name": "go:sum", "value": mod["Sum"]}]
        components.append(c)
    return {
        "bomFormat": "CycloneDX",
        "specVersion": "1.5",
        "serialNumber": "urn:uuid:%s" % uuid.uuid5(uuid.NAMESPACE_URL, "mediamock/%s/%s" % (version, name)),
        "version": 1,
        "metadata": {
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stamp)),
            "tools": {"components": [{"type": "application", "name": "mediamock packages/sbom.py", "version": version}]},
            "component": main,
        },
        "components": components,
        "dependencies": [{"ref": "mockserver", "dependsOn": [c["bom-ref"] for c in components]}],
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--version", required=True)
    ap.add_argument("--bins", required=True, help="folder of mockserver-<goos>-<goarch>[.exe]")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    stamp = epoch()
    for name in sorted(os.listdir(args.bins)):
        if not name.startswith("mockserver-"):
            continue
        target = name[len("mockserver-"):].removesuffix(".exe")
        goos, goarch = target.split("-", 1)
        doc = sbom(os.path.join(args.bins, name), args.version, stamp)
        path = os.path.join(args.out, "mediamock_%s_%s_%s.cdx.json" % (args.version, goos, goarch))
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
        print("%s\t%d components" % (os.path.basename(path), len(doc["components"])))


if __name__ == "__main__":
    main()
