#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The checks of the CUDA target that need an NVIDIA GPU, in one run:
#
#   1. builds with CUDA (preset default; the toolkit must be found);
#   2. runs the lit tests of the GPU target (test/Cuda, and every test that
#      REQUIRES gpu);
#   3. compiles each example plan for the GPU (--target cuda --gpu-arch
#      ARCH) and for the CPU, runs both with `dtensor-run --check` at world
#      size 1, and with every GPU (`-n GPUS`) when there are several, and
#      compares the GPU outputs with the CPU target's;
#   4. times steps of the GPU programs (dtensor-run --warmup --iters) and,
#      when torch with CUDA is importable, PyTorch eager on the same GPU
#      (python -m dtensor_testing.torch_model); prints a table last.
#
#   scripts/gpu-check.sh [--gpu-arch sm_90] [--iters 20] [--warmup 5]
#
# Exits non-zero, saying why, where there is no GPU or a check failed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/scripts/lib.sh"
build=$(dtensor_build_dir)
arch=sm_90
iters=20
warmup=5
while (($#)); do
  case "$1" in
  --gpu-arch) arch=$2; shift 2 ;;
  --iters) iters=$2; shift 2 ;;
  --warmup) warmup=$2; shift 2 ;;
  *) echo "gpu-check: unknown argument $1" >&2; exit 2 ;;
  esac
done

die() {
  echo "gpu-check: FAILED: $*" >&2
  exit 1
}

if ! command -v nvidia-smi >/dev/null ||
  ! gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU') || ((gpus == 0)); then
  die "no NVIDIA GPU here (nvidia-smi lists none): run this on a GPU machine"
fi
echo "gpu-check: $gpus GPU(s):"
nvidia-smi -L

# 1. Build with CUDA.
cmake --preset "${DTENSOR_PRESET:-default}" -DDTENSOR_ENABLE_CUDA=ON >/dev/null ||
  die "configuring with CUDA failed"
cmake --build "$build" || die "the build failed"
[[ -f "$build/lib/libdtensor_runtime_cuda.so" ]] ||
  die "the runtime's CUDA backend was not built (is NCCL installed?)"
bin="$build/bin"

# 2. The GPU lit tests.
/usr/lib/llvm-22/bin/lit -v "$build/test/Cuda" || die "lit test/Cuda"

# 3. Every example plan on the GPU against the CPU target.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rows=()
for plan in "$root"/examples/*.json; do
  name=$(basename "$plan" .json)
  for ranks in 1 $( ((gpus > 1)) && echo "$gpus"); do
    gpu="$work/$name-gpu$ranks.dtc" cpu="$work/$name-cpu$ranks.dtc"
    "$bin/dtensor-compile" "$plan" --mesh "$ranks" --target cuda \
      --gpu-arch "$arch" -o "$gpu" || die "$name: dtensor-compile --target cuda"
    "$bin/dtensor-compile" "$plan" --mesh "$ranks" -o "$cpu" ||
      die "$name: dtensor-compile (cpu)"
    # Every output to a .npy file, for each target.
    mkdir -p "$work/$name-gpu$ranks.out" "$work/$name-cpu$ranks.out"
    outputs() {
      python3 -c 'import json, sys
for t in json.load(open(sys.argv[1]))["tensors"]:
    if t["role"] == "output":
        print("--output", t["name"] + "=" + sys.argv[2] + "/" + t["name"] + ".npy")' \
        "$gpu/manifest.json" "$1"
    }
    # --check: against the artifact's single-device reference (CPU code).
    # shellcheck disable=SC2046
    "$bin/dtensor-run" "$gpu" -n "$ranks" --random-inputs 3 --check \
      $(outputs "$work/$name-gpu$ranks.out") >"$work/log" 2>&1 ||
      { cat "$work/log"; die "$name on $ranks GPU rank(s): --check"; }
    # shellcheck disable=SC2046
    "$bin/dtensor-run" "$cpu" -n "$ranks" --random-inputs 3 \
      $(outputs "$work/$name-cpu$ranks.out") >/dev/null ||
      die "$name on $ranks CPU rank(s)"
    python3 - "$work/$name-gpu$ranks.out" "$work/$name-cpu$ranks.out" <<'PY' ||
import os, sys
import numpy as np
gpu, cpu = sys.argv[1:]
for f in sorted(os.listdir(cpu)):
    a, b = np.load(os.path.join(gpu, f)), np.load(os.path.join(cpu, f))
    scale = max(float(np.abs(b).max()), 1e-30) if b.size else 1.0
    err = float(np.abs(a.astype(np.float64) - b).max()) / scale if b.size else 0.0
    print(f"  {f}: max relative difference GPU vs CPU {err:.3g}")
    if not err <= 1e-3:
        sys.exit(f"{f}: GPU and CPU outputs differ by {err:.3g}")
PY
      die "$name on $ranks rank(s): GPU and CPU outputs differ"
    # 4. Step times.
    ours=$("$bin/dtensor-run" "$gpu" -n "$ranks" --random-inputs 3 \
      --warmup "$warmup" --iters "$iters" | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p')
    torch=n/a
    if ((ranks == 1)); then
      torch=$(PYTHONPATH="$root/python" python3 - "$plan" "$gpu/manifest.json" "$warmup" "$iters" <<'PY' 2>/dev/null || echo n/a
import json, sys, time
import torch
if not torch.cuda.is_available():
    raise SystemExit("no CUDA in torch")
from dtensor_testing import torch_model
plan = torch_model.load_plan(sys.argv[1])
manifest = json.load(open(sys.argv[2]))
kinds = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
         "bf16": torch.bfloat16, "i32": torch.int32, "i64": torch.int64}
values = {}
for t in manifest["tensors"]:
    if t["role"] == "output":
        continue
    dtype = kinds[t["dtype"]]
    values[t["name"]] = (torch.randn(t["shape"], device="cuda").to(dtype)
                         if dtype.is_floating_point else
                         torch.zeros(t["shape"], dtype=dtype, device="cuda"))
warmup, iters = int(sys.argv[3]), int(sys.argv[4])
times = []
with torch.no_grad():
    for i in range(warmup + iters):
        torch.cuda.synchronize()
        start = time.perf_counter()
        torch_model.run_plan(plan, values)
        torch.cuda.synchronize()
        if i >= warmup:
            times.append((time.perf_counter() - start) * 1e3)
print(f"{sorted(times)[len(times) // 2]:.3f}")
PY
)
    fi
    rows+=("$(printf '%-22s %5s %12s %14s' "$name" "$ranks" "${ours:-?}" "$torch")")
  done
done

echo
echo "gpu-check: every check passed on $gpus GPU(s), $arch"
printf '%-22s %5s %12s %14s\n' plan ranks "dtensor ms" "torch eager ms"
printf '%s\n' "${rows[@]}"
