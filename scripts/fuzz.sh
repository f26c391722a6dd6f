#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Builds the libFuzzer targets of fuzz/ (the CMake preset "fuzz": clang-22,
# ASan and UBSan, in build-fuzz/), writes their seeds and dictionaries
# (fuzz/make-corpus.py) and runs each target for SECONDS (default 60). Ends
# with a table per target: seconds run, executions, executions per second,
# edges covered (libFuzzer's cov:), features (ft:), corpus size and crashes,
# then the line "fuzz: N passed, N failed"; exits non-zero when a target
# crashed or could not run. See docs/fuzzing.md.
#
#   scripts/fuzz.sh [--scratch] [SECONDS] [TARGET...]
#
# TARGET: plan, mlir, safetensors, npy, manifest, server-request (default
# all). Each run starts from the seeds, the regression inputs of
# fuzz/regressions/<target>/ and the corpus the earlier runs grew
# (build-fuzz/fuzz/corpus/<target>/); --scratch starts from the seeds and
# regressions alone and keeps nothing (scripts/test.sh's short runs). A
# crash's input is written to build-fuzz/fuzz/findings/<target>/.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
all_targets=(plan mlir safetensors npy manifest server-request)

scratch=0
if [[ ${1:-} == --scratch ]]; then
  scratch=1
  shift
fi
seconds=${1:-60}
if ! [[ $seconds =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/fuzz.sh [--scratch] [SECONDS] [TARGET...]" >&2
  exit 2
fi
shift $(($# > 0 ? 1 : 0))
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=("${all_targets[@]}")
fi
for target in "${targets[@]}"; do
  if [[ " ${all_targets[*]} " != *" $target "* ]]; then
    echo "fuzz: unknown target '$target' (targets: ${all_targets[*]})" >&2
    exit 2
  fi
done

# Per target: the longest input (libFuzzer's -max_len; the seeds are
# shorter: make-corpus.py) and the seconds one input may take before it is
# reported as a hang (the compiler's targets propagate and partition whole
# small models under the sanitizers: seconds each on a busy machine).
max_len() {
  case $1 in
    plan | manifest) echo 12288 ;;
    *) echo 4096 ;;
  esac
}
timeout_of() {
  case $1 in
    plan | mlir) echo 60 ;;
    *) echo 10 ;;
  esac
}

build=$root/build-fuzz
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
echo "== fuzz build (preset fuzz, $build)"
if ! command -v clang++-22 >/dev/null; then
  echo "fuzz: clang++-22 not found: run scripts/setup.sh (it installs clang-22 and libclang-rt-22-dev)" >&2
  echo "fuzz: 0 passed, ${#targets[@]} failed"
  exit 1
fi
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
if ! (cd "$root" && cmake --preset fuzz >"$log/build.txt" 2>&1 &&
    cmake --build --preset fuzz >>"$log/build.txt" 2>&1); then
  tail -40 "$log/build.txt" >&2
  echo "fuzz: the fuzz build failed" >&2
  echo "fuzz: 0 passed, ${#targets[@]} failed"
  exit 1
fi
if ! python3 "$root/fuzz/make-corpus.py" "$build/fuzz" \
    --dictionary-tool "$build/fuzz/bin/dtensor-fuzz-dictionary" >"$log/corpus.txt" 2>&1; then
  cat "$log/corpus.txt" >&2
  echo "fuzz: fuzz/make-corpus.py failed" >&2
  echo "fuzz: 0 passed, ${#targets[@]} failed"
  exit 1
fi

# Findings end the process: leaks too (LeakSanitizer runs at exit and
# after each input that grew the heap); UBSan prints a stack.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

passed=0
failed=0
rows=()
for target in "${targets[@]}"; do
  binary=$build/fuzz/bin/dtensor-fuzz-$target
  findings=$build/fuzz/findings/$target
  mkdir -p "$findings"
  if ((scratch)); then
    corpus=$log/corpus-$target
  else
    corpus=$build/fuzz/corpus/$target
  fi
  mkdir -p "$corpus"
  inputs=("$corpus" "$build/fuzz/seeds/$target")
  if [[ -d $root/fuzz/regressions/$target ]]; then
    inputs+=("$root/fuzz/regressions/$target")
  fi
  echo "== $target: ${seconds}s"
  output=$log/$target.txt
  "$binary" -max_total_time="$seconds" -max_len="$(max_len "$target")" \
    -timeout="$(timeout_of "$target")" -rss_limit_mb=4096 -print_final_stats=1 \
    -dict="$build/fuzz/$target.dict" -artifact_prefix="$findings/" \
    "${inputs[@]}" >"$output" 2>&1
  status=$?
  # The last status line: "#N  REDUCE cov: C ft: F corp: K/..."
  cov=$(grep -oE 'cov: [0-9]+' "$output" | tail -1 | grep -oE '[0-9]+')
  ft=$(grep -oE 'ft: [0-9]+' "$output" | tail -1 | grep -oE '[0-9]+')
  corp=$(grep -oE 'corp: [0-9]+' "$output" | tail -1 | grep -oE '[0-9]+')
  execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$output" | tail -1)
  rate=$(sed -nE 's/^stat::average_exec_per_sec: *([0-9]+).*/\1/p' "$output" | tail -1)
  crashes=0
  if ((status != 0)); then
    crashes=1
    echo "fuzz: $target exited with status $status; its last output:" >&2
    grep -vE '^#[0-9]+' "$output" | tail -60 >&2
    echo "fuzz: the input is in $findings/ (replay: $binary FILE)" >&2
    failed=$((failed + 1))
  elif [[ -z $execs || -z $cov ]]; then
    echo "fuzz: $target printed no statistics; its output:" >&2
    tail -30 "$output" >&2
    failed=$((failed + 1))
  else
    passed=$((passed + 1))
  fi
  rows+=("$(printf '%-15s %8s %12s %9s %7s %7s %7s %8s' "$target" "$seconds" \
    "${execs:--}" "${rate:--}" "${cov:--}" "${ft:--}" "${corp:--}" "$crashes")")
done

echo
printf '%-15s %8s %12s %9s %7s %7s %7s %8s\n' target seconds executions \
  'exec/s' cov ft corpus crashes
printf '%s\n' "${rows[@]}"
echo "fuzz: $passed passed, $failed failed"
((failed == 0))
