"""``mockserver ...`` (the console script) or ``python -m mediamock ...``:
runs this platform's mockserver binary with the arguments given."""
import os
import subprocess
import sys

from ._binary import binary_path
from ._errors import MediamockError


def main():
    try:
        binary = binary_path()
    except MediamockError as err:
        sys.stderr.write("mockserver: %s\n" % err)
        return 1
    argv = [binary] + sys.argv[1:]
    if os.name != "nt":
        os.execv(binary, argv)  # the binary takes this process's place: signals, exit code
    try:
        return subprocess.call(argv)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
