"""The torch lens's own statement-worker op, sent to each worker it starts ("register").

Runs inside the variant's interpreter: Python 3.7+, standard library only (torch is imported
inside the op, never at start-up: most variants have no torch).

  {"op": "torch_profile", "loops": N}  -> {"ok": true, "loops", "wall_ns", "ops",
                                           "torch_version", "cpu_capability"}
     runs the loop under torch.profiler (CPU activity, no shapes, no stacks); "ops" is
     key_averages(): [{"name", "count", "self_cpu_time_total_us", "cpu_time_total_us"}];
     "cpu_capability" is torch.backends.cpu.get_cpu_capability() or null. When torch cannot be
     imported, the reply is a failure with "phase": "torch".
"""


def _cpu_capability(torch):
    """The kernel ISA torch dispatches to ("AVX512", "AVX2" ...); None where torch is too old
    to say (before 2.0)."""
    try:
        import torch.backends.cpu

        return str(torch.backends.cpu.get_cpu_capability())
    except (ImportError, AttributeError):
        return None


def torch_profile(worker, request):
    loops = int(request["loops"])
    try:
        import torch
        from torch.profiler import ProfilerActivity, profile
    except BaseException:  # a broken install fails in many ways; all mean "no torch here"
        return {"ok": False, "phase": "torch", "error": worker.traceback()}
    try:
        with profile(
            activities=[ProfilerActivity.CPU], record_shapes=False, with_stack=False
        ) as profiler:
            wall_ns = worker.timed(loops)
        ops = [
            {
                "name": event.key,
                "count": int(event.count),
                "self_cpu_time_total_us": float(event.self_cpu_time_total),
                "cpu_time_total_us": float(event.cpu_time_total),
            }
            for event in profiler.key_averages()
        ]
    except BaseException:
        return {"ok": False, "phase": "stmt", "error": worker.traceback()}
    return {
        "ok": True,
        "loops": loops,
        "wall_ns": wall_ns,
        "ops": ops,
        "torch_version": str(torch.__version__),
        "cpu_capability": _cpu_capability(torch),
    }


OPS = {"torch_profile": torch_profile}
