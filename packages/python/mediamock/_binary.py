"""Which mockserver binary runs here: the one this wheel carries (built for
one platform), or MEDIAMOCK_BINARY."""
import os
import platform
import sys

from ._errors import MediamockError

try:  # written into the wheel by build_wheels.py
    from ._platform import PLATFORM as BUILT_FOR, WHEEL_TAG
except ImportError:  # a source checkout: no binary inside
    BUILT_FOR, WHEEL_TAG = None, None

#: The platforms a wheel is published for (os-arch, Go's names).
SUPPORTED = ("linux-amd64", "linux-arm64", "darwin-amd64", "darwin-arm64", "windows-amd64", "windows-arm64")

_OS = {"linux": "linux", "darwin": "darwin", "win32": "windows", "cygwin": "windows"}
_ARCH = {"x86_64": "amd64", "amd64": "amd64", "x64": "amd64", "aarch64": "arm64", "arm64": "arm64", "armv8": "arm64"}


def current_platform():
    """This machine as os-arch (linux-amd64, darwin-arm64, windows-amd64, ...);
    MEDIAMOCK_PLATFORM overrides it."""
    override = os.environ.get("MEDIAMOCK_PLATFORM")
    if override:
        return override
    machine = platform.machine().lower()
    return "%s-%s" % (_OS.get(sys.platform, sys.platform), _ARCH.get(machine, machine))


def binary_path():
    """The path of the mockserver binary to run: MEDIAMOCK_BINARY when set,
    else the one in this package. Raises MediamockError saying what is wrong
    and how to fix it."""
    override = os.environ.get("MEDIAMOCK_BINARY")
    if override:
        if not os.path.isfile(override):
            raise MediamockError("binary_missing",
                                 "MEDIAMOCK_BINARY is set to %r, which is not a file. Point it at a mockserver "
                                 "binary, or unset it to use the one this package carries." % override)
        return override
    here = current_platform()
    overridden = " (MEDIAMOCK_PLATFORM)" if os.environ.get("MEDIAMOCK_PLATFORM") else ""
    if here not in SUPPORTED:
        raise MediamockError("unsupported_platform",
                             "mediamock has no mockserver binary for platform %s%s; its wheels carry %s. Build one "
                             "from the source (go build ./cmd/mockserver, Go 1.26) and set MEDIAMOCK_BINARY to its path."
                             % (here, overridden, ", ".join(SUPPORTED)))
    if BUILT_FOR is None:
        raise MediamockError("binary_missing",
                             "this mediamock package carries no mockserver binary (it was not installed from a "
                             "platform wheel). Install the wheel for %s (pip picks it: pip install mediamock), "
                             "or set MEDIAMOCK_BINARY to the path of a mockserver binary." % here)
    if BUILT_FOR != here:
        raise MediamockError("binary_missing",
                             "this mediamock package was installed from the wheel for %s (%s), but this machine is "
                             "%s%s. Reinstall it here so pip picks the wheel for this platform (pip install "
                             "--force-reinstall mediamock), or set MEDIAMOCK_BINARY to the path of a mockserver binary."
                             % (BUILT_FOR, WHEEL_TAG, here, overridden))
    exe = "mockserver.exe" if BUILT_FOR.startswith("windows-") else "mockserver"
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", exe)
    if not os.path.isfile(path):
        raise MediamockError("binary_missing",
                             "the mediamock package for %s should hold %s and does not; reinstall it "
                             "(pip install --force-reinstall mediamock), or set MEDIAMOCK_BINARY." % (here, path))
    if os.name != "nt" and not os.access(path, os.X_OK):
        # Unpacked by hand (a wheel is a zip, which keeps no mode for some tools).
        try:
            os.chmod(path, os.stat(path).st_mode | 0o755)
        except OSError as err:
            raise MediamockError("binary_missing", "%s is not executable and cannot be made so: %s" % (path, err))
    return path
