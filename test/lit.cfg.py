# -*- Python -*-
# lit configuration of the dtensor test suites.

import os
import shutil
import subprocess
import sys

import lit.formats
from lit.llvm import llvm_config

config.name = "dtensor"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dtensor_obj_root, "test")
# unit/ holds gtest sources, run by ctest and scripts/test.sh directly.
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unit", "Inputs"]

config.substitutions.append(("%dtensor_src_root", config.dtensor_src_root))
config.substitutions.append(("%dtensor_obj_root", config.dtensor_obj_root))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    ["dtensor-opt", "dtensor-translate", "dtensor-compile", "dtensor-run",
     "dtensor-bench-ceilings", "dtensor-tokenize", "dtensor-sample"],
    [config.dtensor_tools_dir, config.llvm_tools_dir])
# %python is the interpreter running lit (Debian's /usr/bin/python3 for
# /usr/lib/llvm-22/bin/lit), not whatever `python3` comes first on PATH (a
# pyenv or virtualenv shim may hide the Debian packages): the features below
# are probed with this interpreter, so the tests must run with it too.
config.substitutions.append(("%python", sys.executable))
# Test scripts import helpers next to them (test/Server/server_harness.py):
# no __pycache__ in the source tree.
config.environment["PYTHONDONTWRITEBYTECODE"] = "1"
# Python finds what the tests import through PYTHONPATH (never by editing
# sys.path; scripts/check-structure.py's syspath rule): the test and
# benchmark packages of python/ (dtensor_testing, dtensor_bench, and
# dtensor_export), run as `%python -m dtensor_testing.gen_model_plan ...`,
# and the server tests' harness, test/Server/server_harness.py, which the
# scripts of test/E2E and test/Export share. A RUN line that sets
# PYTHONPATH itself names <src>/python too.
config.environment["PYTHONPATH"] = os.pathsep.join([
    os.path.join(config.dtensor_src_root, "python"),
    os.path.join(config.dtensor_src_root, "test", "Server")])

# Python modules some tests need; a test that REQUIRES a missing one is
# reported UNSUPPORTED. numpy and jsonschema come with scripts/setup.sh
# (python3-numpy, python3-jsonschema); torch (python3-torch) is optional.
for module in ("numpy", "jsonschema", "torch"):
    if subprocess.run([sys.executable, "-c", "import " + module],
                      stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL).returncode == 0:
        config.available_features.add(module)

# PyTorch DTensor as the oracle (test/Oracle): the virtual environment of
# scripts/torch-env.sh, which scripts/test.sh creates and names in
# DTENSOR_TORCH_PYTHON; without it the oracle tests are UNSUPPORTED, and
# scripts/test.sh counts a failure when the environment cannot be made.
torch_python = os.environ.get("DTENSOR_TORCH_PYTHON") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
    "dtensor", "torch-venv", "bin", "python")
if os.access(torch_python, os.X_OK) and os.path.exists(
        os.path.join(os.path.dirname(os.path.dirname(torch_python)),
                     "dtensor-stamp")):
    config.available_features.add("torch-dtensor")
    config.substitutions.append(("%torch_python", torch_python))
    # Packages added to the same requirements later, each a feature of its
    # own: an environment made from older requirements lacks them
    # (find_spec does not import them). openai: the server's /v1/completions
    # driven by the real client (test/Server/openai-client.test);
    # transformers: Hugging Face models for the exporter (test/Export);
    # sentencepiece: the reference of the C++ tokenizers (test/Tools/
    # dtensor-tokenize; Hugging Face `tokenizers` comes with transformers).
    for package in ("openai", "transformers", "sentencepiece"):
        if subprocess.run([torch_python, "-c",
                           "import importlib.util, sys; sys.exit("
                           f"importlib.util.find_spec('{package}') is None)"],
                          stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0:
            config.available_features.add(package)
config.substitutions.append(("%dtensor_tools_dir", config.dtensor_tools_dir))

# The inference server (examples/server) is built only when cpp-httplib was
# found at configure time; test/Server REQUIRES it.
if config.dtensor_build_server == "ON" and os.path.exists(
        os.path.join(config.dtensor_tools_dir, "dtensor-server")):
    config.available_features.add("dtensor-server")
    llvm_config.add_tool_substitutions(["dtensor-server"],
                                       [config.dtensor_tools_dir])

# mpirun with what every run here needs: more ranks than cores, root in
# containers, shared memory between the ranks of this machine.
mpirun = ["mpirun", "--oversubscribe", "--mca", "btl", "self,vader"]
if os.geteuid() == 0:
    mpirun.append("--allow-run-as-root")
config.substitutions.append(("%mpirun", " ".join(mpirun)))

# Several hosts on this machine (scripts/netns-hosts.sh: network namespaces
# joined by a bridge, docs/runtime.md#several-hosts) need root and iproute2;
# the tests that use them REQUIRE netns-hosts, and lit says why they are
# UNSUPPORTED elsewhere.
netns_hosts = os.path.join(config.dtensor_src_root, "scripts", "netns-hosts.sh")
config.substitutions.append(("%netns_hosts", netns_hosts))
netns_check = subprocess.run([netns_hosts, "check"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, timeout=30)
if netns_check.returncode == 0:
    config.available_features.add("netns-hosts")
else:
    lit_config.note("tests that REQUIRE netns-hosts are UNSUPPORTED: " +
                    netns_check.stdout.decode(errors="replace").strip())

# The installed-runtime tests build a tiny consumer with CMake and with
# pkg-config (longer names first: lit substitutes in order).
config.substitutions.append(("%cmake_generator", config.cmake_generator))
config.substitutions.append(("%cmake_make_program", config.cmake_make_program))
config.substitutions.append(("%cmake", config.cmake_command))
if shutil.which("pkg-config"):
    config.available_features.add("pkg-config")

# The CUDA target: cuda-toolkit when the build found the toolkit (ptxas and
# libdevice, which the GPU pipeline needs to emit device code); gpu when this
# machine also has an NVIDIA GPU that nvidia-smi lists. Tests that run on a
# GPU REQUIRE gpu and are reported UNSUPPORTED elsewhere; lit -v names them.
if config.dtensor_cuda_toolkit_dir:
    config.available_features.add("cuda-toolkit")
    config.substitutions.append(("%cuda_toolkit", config.dtensor_cuda_toolkit_dir))
    nvidia_smi = shutil.which("nvidia-smi")
    if nvidia_smi and subprocess.run(
            [nvidia_smi, "-L"], stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL).stdout.strip().startswith(b"GPU"):
        config.available_features.add("gpu")
