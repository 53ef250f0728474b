"""A numpy extension module's file name and path as the tools name it, the selector change of a
machine where numpy's X86_V3 kernels are disabled (NPY_DISABLE_CPU_FEATURES), and the demangled
names of x86-simd-sort's kernels for two vector types."""

from __future__ import annotations

from perflab.tool_output.symbol_names import selector_changes

# the extension module whose kernels numpy dispatches per CPU
NPY = "_multiarray_umath.cpython-312-x86_64-linux-gnu.so"
OBJ = f"/venv/numpy/_core/{NPY}"
DISABLED = selector_changes({}, {"NPY_DISABLE_CPU_FEATURES": "X86_V3"})

# numpy 2.4.6's x86-simd-sort on an AVX-512 host, default vs NPY_DISABLE_CPU_FEATURES=X86_V4
# (bench/results/field34_2026-11-29.md, `sort`): each kernel's zmm instantiation ran in the
# baseline only, its avx2 one in the variant only, all in _multiarray_umath
ZMM_SORT = (
    "void sort_n_vec<zmm_vector<float>, Comparator<zmm_vector<float>, false>, 32, "
    "float __vector(16)>(zmm_vector<float>::type_t*, int)"
)
AVX2_SORT = (
    "void sort_n_vec<avx2_vector<float>, Comparator<avx2_vector<float>, false>, 32, "
    "float __vector(8)>(avx2_vector<float>::type_t*, int)"
)
ZMM_PARTITION = (
    "unsigned long partition_unrolled<zmm_vector<float>, Comparator<zmm_vector<float>, false>, "
    "8, float>(float*, unsigned long, unsigned long, float, float*, float*)"
)
AVX2_PARTITION = (
    "unsigned long partition_unrolled<avx2_vector<float>, Comparator<avx2_vector<float>, "
    "false>, 4, float>(float*, unsigned long, unsigned long, float, float*, float*) "
    "[clone .part.0] [clone .constprop.0]"
)
