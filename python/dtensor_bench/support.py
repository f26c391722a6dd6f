# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""What the benchmarks share (dtensor_bench's suites, decode,
context_parallel, server): the checkout's paths, progress lines, running
a command and the tables' number formats; stdlib only.

The benchmarks start Python modules of this package and of dtensor_testing
in child processes (`python -m dtensor_bench.peers.torch_tp`,
`python -m dtensor_testing.gen_model_plan`): the children find them
through PYTHONPATH, which scripts/bench.sh and test/lit.cfg.py set to
<root>/python and which the children inherit."""

import os
import subprocess
import sys
import time

# The checkout: python/dtensor_bench/support.py -> the root.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "scripts")
START = time.monotonic()


def log(message):
    """Progress on stderr, with the time since the start."""
    elapsed = time.monotonic() - START
    print(f"[bench {int(elapsed) // 60:2d}:{int(elapsed) % 60:02d}] {message}",
          file=sys.stderr, flush=True)


def fmt_bytes(n):
    """A byte count for the tables: B, KiB, MiB or GiB."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def fmt_ms(ms):
    """Milliseconds for the tables: 3 decimals below 10 ms, else 1."""
    return f"{ms:.3f}" if ms < 10 else f"{ms:.1f}"


def module_command(python, module):
    """The command line that runs `module` (a package's module, as
    `python -m` names it) with the interpreter `python`."""
    return [python, "-m", module]


def run(cmd, timeout=None, env=None, check=True):
    """Runs a command, returns its CompletedProcess (text); with `check`,
    raises with the end of the command's output when it fails."""
    result = subprocess.run(cmd, capture_output=True, text=True,
                            timeout=timeout, env=env)
    if check and result.returncode != 0:
        raise RuntimeError(f"command failed ({result.returncode}): "
                           f"{' '.join(cmd)}\n{result.stdout[-3000:]}"
                           f"{result.stderr[-3000:]}")
    return result
