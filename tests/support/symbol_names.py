"""A numpy extension module's file name and path as the tools name it, and the selector change
of a machine where numpy's X86_V3 kernels are disabled (NPY_DISABLE_CPU_FEATURES)."""

from __future__ import annotations

from perflab.tool_output.symbol_names import selector_changes

# the extension module whose kernels numpy dispatches per CPU
NPY = "_multiarray_umath.cpython-312-x86_64-linux-gnu.so"
OBJ = f"/venv/numpy/_core/{NPY}"
DISABLED = selector_changes({}, {"NPY_DISABLE_CPU_FEATURES": "X86_V3"})
