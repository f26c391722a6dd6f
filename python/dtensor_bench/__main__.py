# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""`python3 -m dtensor_bench [options]`: the benchmarks (cli.py)."""

import sys

from dtensor_bench.cli import main

sys.exit(main())
