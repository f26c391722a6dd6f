#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""What the benchmark scripts share (scripts/bench.py, bench_decode.py,
bench_context_parallel.py): running a command, stdlib only."""

import subprocess


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
