# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The benchmarks of dtensor (`python3 -m dtensor_bench`, which
scripts/bench.sh runs after building the tools; cli.py describes the
steps): ceilings, workloads, suites, the PyTorch peers (peers/) and the
report, plus the decode (decode), context-parallel (context_parallel) and
serving (server) benchmarks, each also runnable alone
(`python3 -m dtensor_bench.decode ...`)."""
