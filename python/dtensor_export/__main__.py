# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""python -m dtensor_export: the dtensor-export command."""

import sys

from .cli import main

sys.exit(main())
