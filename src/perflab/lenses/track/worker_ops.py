"""The track lens's own statement-worker op, sent to each worker it starts ("register").

Runs inside the variant's interpreter: Python 3.7+, standard library only.

  {"op": "track_value", "expr": E}  -> {"ok": true, "value": X or null, "type": T, "unit": U}
     evaluates E (the benchmark's statement, an expression) in the set-up's namespace: "value"
     is its value as a float where it is a real number (a bool is not), else null with "type"
     naming what it is; "unit" is what the set-up bound to `track_unit` (as text), else null.
     A statement that raises replies a failure in phase "stmt".
"""

import numbers


def track_value(worker, request):
    """The `track_value` op: the statement's value, and the unit the set-up names."""
    namespace = worker.namespace if worker.namespace is not None else {}
    try:
        value = eval(compile(request["expr"], "<track>", "eval"), namespace)
    except BaseException:
        return {"ok": False, "phase": "stmt", "error": worker.traceback()}
    number = isinstance(value, numbers.Real) and not isinstance(value, bool)
    unit = namespace.get("track_unit")
    return {
        "ok": True,
        "value": float(value) if number else None,
        "type": type(value).__name__,
        "unit": None if unit is None else str(unit),
    }


OPS = {"track_value": track_value}
