"""callgrind_annotate's output built from a few lines of costs, for the parsers' and the
instructions lens's tests."""

from __future__ import annotations

from types import MappingProxyType

from perflab.tool_output.callgrind import CallCost, FunctionCost, FunctionCosts, FunctionId


def costs(
    selfs: dict[str, float], calls: dict[tuple[str, str], float] | None = None, obj: str = "prog"
) -> FunctionCosts:
    """Costs of one event; a call's inclusive cost is the callee's self cost times 1."""
    functions = {
        FunctionId(n, obj): FunctionCost(FunctionId(n, obj), "a.c", (v,)) for n, v in selfs.items()
    }
    edges = {}
    for (caller, callee), count in (calls or {}).items():
        key = (FunctionId(caller, obj), FunctionId(callee, obj))
        edges[key] = CallCost(key[0], key[1], count, (selfs[callee],))
    return FunctionCosts(("Ir",), MappingProxyType(functions), MappingProxyType(edges))
