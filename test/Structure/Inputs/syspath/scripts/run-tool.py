# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import os
import sys
sys.path.insert(0, os.path.dirname(__file__))
sys.path.append("/opt/tools")
