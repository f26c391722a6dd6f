# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Reading sys.path is fine; sys.path.insert(0, here) in a comment is too.
import sys
print(sys.path, "/opt" in sys.path, sys.path == [])
text = "sys.path"
sys.path.extend(["/opt"])
