"""The torch lens's own statement-worker op, sent to each worker it starts ("register").

Runs inside the variant's interpreter: Python 3.7+, standard library only (torch is imported
inside the op, never at start-up: most variants have no torch).

  {"op": "torch_profile", "loops": N}  -> {"ok": true, "loops", "wall_ns", "run_queue_ns",
                                           "ops", "torch_version", "cpu_capability"}
     runs the loop under torch.profiler (CPU activity, no shapes, no stacks); "run_queue_ns"
     is how long the worker's thread waited for a CPU meanwhile (null off Linux); "ops" is
     key_averages(): [{"name", "count", "self_cpu_time_total_us", "cpu_time_total_us"}];
     "cpu_capability" is torch.backends.cpu.get_cpu_capability() or null. Where the process
     has initialised CUDA, the profiler records the device too: the reply has "device": "cuda"
     and each op "on_device" (a kernel or a copy, not a host-side call) and
     "self_device_time_total_us"; an op that launched device work has "kernels": what it
     launched, per position in one call of the op (0 = its first launch) and name,
     [{"position", "name", "count", "device_time_total_us"}] (torch links each kernel and copy
     to the innermost op running when it was launched). The sampling's own events are left
     out: the profiler's bookkeeping ("Activity Buffer Request") and the synchronisations
     around the loop, found by profiling an empty loop the same way and subtracting its
     counts. When torch cannot be imported, the reply is a failure with "phase": "torch".
  {"op": "torch_warm"}                -> {"ok": true, "wall_ns", "device_runtimes"}
     one empty torch.profiler session, in a fork server before it forks: a process's first
     session initialises the profiler (seconds), and children forked after it start warm
     (their first session as quick as their second).
"""


def _cpu_capability(torch):
    """The kernel ISA torch dispatches to ("AVX512", "AVX2" ...); None where torch is too old
    to say (before 2.0)."""
    try:
        import torch.backends.cpu

        return str(torch.backends.cpu.get_cpu_capability())
    except (ImportError, AttributeError):
        return None


def _run_queue_ns():
    """This thread's time waiting on a run queue so far (Linux's schedstat), or None."""
    try:
        with open("/proc/thread-self/schedstat") as stat:
            return int(stat.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None


def torch_profile(worker, request):
    """The `torch_profile` op: the statement's loop profiled with torch.profiler; replies its op
    table, torch's version and CPU capability."""
    loops = int(request["loops"])
    try:
        import torch
        from torch.profiler import ProfilerActivity, profile
    except BaseException:  # a broken install fails in many ways; all mean "no torch here"
        return {"ok": False, "phase": "torch", "error": worker.traceback()}
    # the device's activity only where the set-up or statement initialised CUDA: asking
    # whether CUDA is available would initialise it in a process that may still fork
    on_device = _cuda_initialised(torch)
    activities = [ProfilerActivity.CPU]
    if on_device:
        activities.append(ProfilerActivity.CUDA)
    try:
        with profile(activities=activities, record_shapes=False, with_stack=False) as profiler:
            waited_before = _run_queue_ns()
            wall_ns = worker.timed(loops)
            waited_after = _run_queue_ns()
        ops = [
            _op_entry(event, on_device)
            for event in profiler.key_averages()
            if event.key not in PROFILER_EVENTS
        ]
        if on_device:
            _add_launches(ops, profiler.events())
            with profile(activities=activities, record_shapes=False, with_stack=False) as empty:
                worker.timed(1, True)
            ops = _without_sampling(ops, {e.key: e.count for e in empty.key_averages()})
    except BaseException:
        return {"ok": False, "phase": "stmt", "error": worker.traceback()}
    reply = {
        "ok": True,
        "loops": loops,
        "wall_ns": wall_ns,
        "run_queue_ns": (
            None if waited_before is None or waited_after is None else waited_after - waited_before
        ),
        "ops": ops,
        "torch_version": str(torch.__version__),
        "cpu_capability": _cpu_capability(torch),
    }
    if on_device:
        reply["device"] = "cuda"
    return reply


def _cuda_initialised(torch):
    try:
        return bool(torch.cuda.is_initialized())
    except BaseException:  # a CPU-only or old build: no device to profile
        return False


def _first_attribute(event, names):
    """The first of `names` the event has (torch renamed cuda_* to device_* in 2.4)."""
    for name in names:
        value = getattr(event, name, None)
        if value is not None:
            return float(value)
    return 0.0


def _op_entry(event, on_device):
    entry = {
        "name": event.key,
        "count": int(event.count),
        "self_cpu_time_total_us": float(event.self_cpu_time_total),
        "cpu_time_total_us": float(event.cpu_time_total),
    }
    if on_device:
        # kernels and copies run on the device; their CPU times are 0
        entry["on_device"] = "CUDA" in str(getattr(event, "device_type", ""))
        entry["self_device_time_total_us"] = _first_attribute(
            event, ("self_device_time_total", "self_cuda_time_total")
        )
    return entry


# The profiler's own events, not the statement's: CUPTI's buffer allocation in the first
# profile of a process (milliseconds of host time, once).
PROFILER_EVENTS = frozenset({"Activity Buffer Request"})


def _without_sampling(ops, sampling_counts):
    """`ops` less the calls an empty loop made (the synchronisations before each clock
    reading and the profiler's at its end): counts subtracted, times scaled alike."""
    kept = []
    for entry in ops:
        sampling = sampling_counts.get(entry["name"], 0)
        if sampling and not entry.get("on_device"):
            count = entry["count"] - sampling
            if count <= 0:
                continue
            share = float(count) / entry["count"]
            entry = dict(entry, count=count)
            for key in ("self_cpu_time_total_us", "cpu_time_total_us"):
                entry[key] *= share
        kept.append(entry)
    return kept


def _add_launches(ops, events):
    """Each op entry gets the kernels and copies its calls launched, by position in one call
    and name: the pairing key across variants, where a library update renames a kernel."""
    launched = {}  # op name -> {(position, kernel name): [count, device µs]}
    for event in events:
        kernels = getattr(event, "kernels", None) or ()
        if not kernels or getattr(event, "is_legacy", False) or _not_an_op(event.name):
            continue  # legacy events list the op itself as its kernel
        per_op = launched.setdefault(event.name, {})
        for position, kernel in enumerate(kernels):
            total = per_op.setdefault((position, kernel.name), [0, 0.0])
            total[0] += 1
            total[1] += float(kernel.duration)
    for entry in ops:
        per_op = launched.get(entry["name"])
        if per_op:
            entry["kernels"] = [
                {"position": position, "name": name, "count": count, "device_time_total_us": us}
                for (position, name), (count, us) in sorted(per_op.items())
            ]


def _not_an_op(name):
    """Runtime calls and the profiler's events: torch sometimes hangs a kernel on them (one
    launched before the profile began, or its parent's, copied), where the op has it too."""
    return name.startswith("cuda") or name in PROFILER_EVENTS


def torch_warm(worker, request):
    """The `torch_warm` op: torch.profiler started once with nothing in it, so a fork server's
    children do not pay its initialisation."""
    try:
        import time

        from torch.profiler import ProfilerActivity, profile
    except BaseException:
        return {"ok": False, "phase": "torch", "error": worker.traceback()}
    started = time.perf_counter_ns()
    try:
        with profile(
            activities=[ProfilerActivity.CPU], record_shapes=False, with_stack=False
        ) as profiler:
            pass
        profiler.key_averages()
    except BaseException:
        return {"ok": False, "phase": "torch", "error": worker.traceback()}
    return {
        "ok": True,
        "wall_ns": time.perf_counter_ns() - started,
        "device_runtimes": worker.device_runtimes(),
    }


OPS = {"torch_profile": torch_profile, "torch_warm": torch_warm}
