# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import site
import sys
sys.path = ["/opt"] + sys.path
sys.path[0:0] = ["/opt"]
sys.path += ["/opt"]
site.addsitedir("/opt")
