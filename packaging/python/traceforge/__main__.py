"""python -m traceforge ARGS: runs the installed traceforge binary with ARGS."""

import os
import sys

from traceforge import binary_path


def main():
    try:
        exe = binary_path()
    except FileNotFoundError as e:
        print(e, file=sys.stderr)
        sys.exit(2)
    # The binary replaces this process: same pid, signals and exit code.
    os.execv(exe, [exe, *sys.argv[1:]])


if __name__ == "__main__":
    main()
