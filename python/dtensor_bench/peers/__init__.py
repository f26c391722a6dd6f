# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The PyTorch peers of the benchmarks: torch_tp (PyTorch eager with manual
Megatron-style tensor parallelism), torch_dtensor (nn.Modules with
DTensor's parallelize_module, eager and compiled), torch_cp (PyTorch's
context_parallel), each runnable as `python -m dtensor_bench.peers.<name>`;
and servers, how the benchmark drives them."""
