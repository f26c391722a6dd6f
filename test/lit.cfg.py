# -*- Python -*-
# lit configuration of the dtensor test suites.

import os

import lit.formats
from lit.llvm import llvm_config

config.name = "dtensor"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dtensor_obj_root, "test")
# unit/ holds gtest sources, run by ctest and scripts/test.sh directly.
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unit"]

config.substitutions.append(("%dtensor_src_root", config.dtensor_src_root))
config.substitutions.append(("%dtensor_obj_root", config.dtensor_obj_root))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    ["dtensor-opt", "dtensor-translate", "dtensor-compile", "dtensor-run"],
    [config.dtensor_tools_dir, config.llvm_tools_dir])
config.substitutions.append(("%python", "python3"))
