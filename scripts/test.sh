#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Installs what is missing, builds, and runs every test suite: the lit +
# FileCheck suites (with the PyTorch DTensor oracle tests, whose PyTorch
# scripts/torch-env.sh installs) and the gtest unit tests. Ends with one summary line,
# "N passed, N failed"; exits non-zero when a test failed or none ran.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/scripts/lib.sh"
build=$(dtensor_build_dir)

# Seconds each fuzz target runs (at the end; 0: not at all).
fuzz_seconds=${DTENSOR_FUZZ_SECONDS:-15}
if ! [[ $fuzz_seconds =~ ^[0-9]+$ ]]; then
  echo "test: DTENSOR_FUZZ_SECONDS must be a number of seconds" >&2
  exit 2
fi

passed=0
failed=0
summary() {
  failure_digest
  echo "$passed passed, $failed failed"
  ((failed == 0 && passed > 0))
  exit
}

# The last lines of each failed lit test's output again, just before the
# summary: a log cut to its head and tail still shows why a test failed.
failure_digest() {
  [[ -f ${log:-}/lit.txt ]] || return 0
  awk '/^\*+ TEST .* FAILED \*+$/ { name = $0; n = 0; inside = 1; next }
       inside && /^\*+$/ { inside = 0; print "== failed: " name;
         for (i = (n > 30 ? n - 30 : 0); i < n; i++) print lines[i];
         next }
       inside { lines[n++] = $0 }' "$log/lit.txt"
}

if ! "$root/scripts/setup.sh" || ! cmake --build "$build" --target dtensor-unit-tests; then
  echo "test: the build failed" >&2
  failed=1
  summary
fi

log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

# PyTorch 2 for the oracle tests (test/Oracle): installed once into a
# virtual environment of its own (scripts/torch-env.sh, about 90 s on a
# fresh machine), then reused. Without it those tests cannot run: a failure.
echo "== PyTorch environment (scripts/torch-env.sh)"
if DTENSOR_TORCH_PYTHON=$("$root/scripts/torch-env.sh" --python); then
  export DTENSOR_TORCH_PYTHON
else
  echo "test: scripts/torch-env.sh failed: the oracle tests cannot run" >&2
  failed=$((failed + 1))
fi

# Count from lit's closing summary (the lines after "Testing Time:"):
# "Passed: N", "Failed: N", ...
lit_count() {
  sed -n '/^Testing Time:/,$p' "$1" |
    sed -nE "s/^ *($2) *: *([0-9]+).*/\2/p" | awk '{s += $1} END {print s + 0}'
}

echo "== lit + FileCheck"
/usr/lib/llvm-22/bin/lit -sv "$build/test" 2>&1 | tee "$log/lit.txt"
lit_status=${PIPESTATUS[0]}
lit_passed=$(lit_count "$log/lit.txt" 'Passed')
lit_failed=$(lit_count "$log/lit.txt" 'Failed|Unresolved|Timed Out|Unexpectedly Passed')
if ((lit_passed + lit_failed == 0)); then
  echo "lit: no test ran" >&2
  lit_failed=1
elif ((lit_status != 0 && lit_failed == 0)); then
  echo "lit: exited with status $lit_status" >&2
  lit_failed=1
fi
passed=$((passed + lit_passed))
failed=$((failed + lit_failed))

# Runs every gtest binary of $1/test/unit; *MpiTest binaries under mpirun on
# 1 to 4 ranks (only rank 0 prints). Adds to passed/failed.
mpi_flags=(--oversubscribe --mca btl self,vader)
if [[ $(id -u) -eq 0 ]]; then
  mpi_flags+=(--allow-run-as-root)
fi
run_unit_tests() {
  local dir=$1 label=$2
  shopt -s nullglob
  local unit_tests=("$dir"/test/unit/*Test)
  shopt -u nullglob
  if ((${#unit_tests[@]} == 0)); then
    echo "gtest: no unit test binary in $dir/test/unit" >&2
    failed=$((failed + 1))
    return
  fi
  local runs=() test run ranks name status ok bad
  for test in "${unit_tests[@]}"; do
    if [[ $test == *MpiTest ]]; then
      for ranks in 1 2 3 4; do
        runs+=("$ranks:$test")
      done
    else
      runs+=("0:$test")
    fi
  done
  for run in "${runs[@]}"; do
    ranks=${run%%:*}
    test=${run#*:}
    name="$label$(basename "$test")"
    if ((ranks > 0)); then
      name="$name (mpirun -n $ranks)"
      timeout 600 mpirun "${mpi_flags[@]}" -n "$ranks" "$test" --gtest_brief=1 \
        --gtest_color=no 2>&1 | tee "$log/gtest.txt"
    else
      "$test" --gtest_brief=1 2>&1 | tee "$log/gtest.txt"
    fi
    status=${PIPESTATUS[0]}
    ok=$(sed -nE 's/^\[  PASSED  \] ([0-9]+) tests?.*/\1/p' "$log/gtest.txt")
    bad=$(sed -nE 's/^\[  FAILED  \] ([0-9]+) tests?.*/\1/p' "$log/gtest.txt")
    ok=${ok:-0}
    bad=${bad:-0}
    if ((status != 0 && bad == 0)); then
      echo "gtest: $name exited with status $status" >&2
      bad=1
    elif ((ok + bad == 0)); then
      echo "gtest: $name ran no test" >&2
      bad=1
    fi
    echo "$name: $ok passed, $bad failed"
    passed=$((passed + ok))
    failed=$((failed + bad))
  done
}

echo "== gtest"
run_unit_tests "$build" ""

# The runtime, its tools and the server without LLVM/MLIR (what a compute
# node or an inference image builds): configure, build, its unit tests.
echo "== runtime-only build (DTENSOR_BUILD_COMPILER=OFF)"
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
if (cd "$root" && cmake --preset runtime-only >"$log/runtime-only.txt" 2>&1 &&
    cmake --build --preset runtime-only >>"$log/runtime-only.txt" 2>&1); then
  run_unit_tests "$root/build-runtime" "runtime-only: "
else
  tail -40 "$log/runtime-only.txt" >&2
  echo "test: the runtime-only build failed" >&2
  failed=$((failed + 1))
fi

# Every libFuzzer target of fuzz/ (clang-22, ASan, UBSan; a second build in
# build-fuzz/) for a short fixed time from its seeds and regression inputs,
# so that a parser that starts crashing on them, or on what a few seconds
# of mutation find, fails here. Longer runs: scripts/fuzz.sh SECONDS.
if ((fuzz_seconds == 0)); then
  echo "== fuzz targets: skipped (DTENSOR_FUZZ_SECONDS=0)"
  summary
fi
echo "== fuzz targets (scripts/fuzz.sh --scratch $fuzz_seconds)"
"$root/scripts/fuzz.sh" --scratch "$fuzz_seconds" 2>&1 | tee "$log/fuzz.txt"
fuzz_status=${PIPESTATUS[0]}
fuzz_passed=$(sed -nE 's/^fuzz: ([0-9]+) passed, ([0-9]+) failed$/\1/p' "$log/fuzz.txt")
fuzz_failed=$(sed -nE 's/^fuzz: ([0-9]+) passed, ([0-9]+) failed$/\2/p' "$log/fuzz.txt")
if [[ -z $fuzz_passed ]]; then
  echo "test: scripts/fuzz.sh printed no summary" >&2
  fuzz_passed=0
  fuzz_failed=1
elif ((fuzz_status != 0 && fuzz_failed == 0)); then
  fuzz_failed=1
fi
passed=$((passed + fuzz_passed))
failed=$((failed + fuzz_failed))

summary
