"""The statement worker's timed loop: the statement compiled into a loop that reads a clock around
its iterations, and the GPU runtimes that loop synchronises with. Standard library only, Python
3.7+: it runs in the variant's interpreter, next to statement_worker.py."""

import os
import sys

_TEMPLATE = """
def _perflab_inner(_perflab_it, _perflab_timer):
    _perflab_t0 = _perflab_timer()
    for _perflab_i in _perflab_it:
{body}
    return _perflab_timer() - _perflab_t0
"""


def _indent(code, spaces):
    pad = " " * spaces
    return "\n".join(pad + line for line in code.splitlines()) or pad + "pass"


# Module scope: the statement runs as top-level code (names resolve through the namespace dict,
# LOAD_NAME), as torch.utils.benchmark's collect_callgrind runs it.
_MODULE_TEMPLATE = """
_perflab_t0 = _perflab_timer()
for _perflab_i in _perflab_it:
{body}
_perflab_elapsed = _perflab_timer() - _perflab_t0
"""


def compile_loop(stmt, namespace, scope="function"):
    """A callable loop(iterator, timer) -> elapsed ns running `stmt` once per item."""
    # Compile the statement alone first so a syntax error points at the user's code.
    compile(stmt, "<stmt>", "exec")
    if scope == "module":
        code = compile(_MODULE_TEMPLATE.format(body=_indent(stmt, 4)), "<perflab-loop>", "exec")

        def module_loop(iterator, timer):
            namespace["_perflab_it"] = iterator
            namespace["_perflab_timer"] = timer
            exec(code, namespace)
            return namespace["_perflab_elapsed"]

        return module_loop
    source = _TEMPLATE.format(body=_indent(stmt, 8))
    exec(compile(source, "<perflab-loop>", "exec"), namespace)
    return namespace.pop("_perflab_inner")


# Device files a GPU runtime keeps open once initialised: such a runtime does not survive fork.
_DEVICE_FILES = (("/dev/nvidia", "cuda"), ("/dev/kfd", "rocm"), ("/dev/dri/renderD", "gpu"))


def _torch_cuda():
    """torch.cuda where this process already imported torch (never imported here: most
    variants have no torch, and importing it is not this worker's to decide)."""
    return getattr(sys.modules.get("torch"), "cuda", None)


def device_runtimes(fd_dir="/proc/self/fd"):
    """The GPU runtimes this process has initialised: device files of a GPU driver among its
    open files, and torch's own record of CUDA's initialisation. A process with any must not
    fork workers: the children's first use of the device fails."""
    found = set()
    try:
        names = os.listdir(fd_dir)
    except OSError:
        names = []
    for name in names:
        try:
            target = os.readlink(os.path.join(fd_dir, name))
        except OSError:
            continue  # closed meanwhile (the listing's own fd)
        for prefix, runtime in _DEVICE_FILES:
            if target.startswith(prefix):
                found.add(runtime)
    cuda = _torch_cuda()
    try:
        if cuda is not None and cuda.is_initialized():
            found.add("cuda")
    except Exception:  # a torch too old or broken to say: its files above still count
        pass
    return sorted(found)


def device_synchroniser():
    """torch.cuda.synchronize where this process has initialised CUDA through torch, else None:
    a statement that launches device work is timed until that work is done, not until the
    launch returns."""
    cuda = _torch_cuda()
    try:
        if cuda is not None and cuda.is_initialized():
            return cuda.synchronize
    except Exception:
        return None
    return None


def synchronised(timer, synchronise):
    """`timer`, read after the device finished what was launched before the reading."""

    def synchronised_timer():
        synchronise()
        return timer()

    return synchronised_timer
