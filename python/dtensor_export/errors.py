# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The one exception the exporter raises for input it cannot export."""


class ExportError(Exception):
    """A module, op or plan entry the exporter cannot translate. The message
    names the op, the module path and the source line where known."""
