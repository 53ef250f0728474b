"""A dispatch in numpy's copies as the instructions lens pairs it: one row, only under a
selector."""

from __future__ import annotations

from perflab.lenses.instructions.pairing import name_pairing
from perflab.tool_output.callgrind import FunctionCost, FunctionCosts, FunctionId
from tests.support.symbol_names import DISABLED, OBJ

SUBJECT = "perflab.lenses.instructions.pairing"


def _costs(*names: str, obj: str = OBJ) -> FunctionCosts:
    ids = [FunctionId(name, obj) for name in ("main", *names)]
    return FunctionCosts(("Ir",), {f: FunctionCost(f, "", (100.0,)) for f in ids})


def test_instructions_show_a_dispatched_pair_on_one_row_only_with_a_selector() -> None:
    base, new = _costs("DOUBLE_add_X86_V3"), _costs("DOUBLE_add")
    pairing = name_pairing(base, new, DISABLED)
    renamed = new.renamed(lambda f: FunctionId(pairing.variant_name(f.name), f.object))
    assert {f.name for f in renamed.functions} == {"main", "DOUBLE_add_X86_V3"}
    [pair] = pairing.pairs
    assert "NPY_DISABLE_CPU_FEATURES=X86_V3" in pair.reason
    assert name_pairing(base, new).pairs == ()  # no selector: two functions
    # the copies of two objects are not one function's
    assert name_pairing(base, _costs("DOUBLE_add", obj="/other.so"), DISABLED).pairs == ()
