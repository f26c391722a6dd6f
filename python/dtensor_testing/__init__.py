# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""What the tests of dtensor use besides the tools (test-only; not part of
the installed dtensor-export): model plans (gen_model_plan, gen_tp_model),
their test tensors (make_test_tensors), the PyTorch reference of the plan
ops (torch_model), generation with a KV cache (torch_generate) and the
Llama as nn.Modules (llama). Each command-line module runs as
`python3 -m dtensor_testing.<module>` with PYTHONPATH=<root>/python."""
