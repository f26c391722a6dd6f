#!/usr/bin/env python3
"""Runs a command and prints its exit status, for the tests of the tools'
command lines: `not` only says that a command failed, not with which status.

  exit-status.py COMMAND [ARG...]

The command's own output goes where this script's goes; the last line is
"exit status N". Exits 0 whatever the command's status.
"""

import subprocess
import sys

sys.stdout.flush()
status = subprocess.call(sys.argv[1:])
print(f"exit status {status}", flush=True)
