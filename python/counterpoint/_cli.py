"""The `counterpoint` console script of a pip-installed package: runs the CLI bundled in the
package (counterpoint/bin/counterpoint), which finds its libraries and the demo corpus beside it."""

import os
import sys


def main() -> None:
    binary = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "counterpoint")
    if not os.access(binary, os.X_OK):
        sys.exit(f"counterpoint: no CLI at {binary}; this copy of the package was not installed by pip "
                 "(in a checkout, run build/bin/counterpoint)")
    # `counterpoint models install` runs the converters in this interpreter, which has the package's
    # dependencies (numpy; torch from the system).
    os.environ.setdefault("COUNTERPOINT_PYTHON", sys.executable)
    os.execv(binary, [binary] + sys.argv[1:])


if __name__ == "__main__":
    main()
