"""An asv benchmark directory read the way asv reads it, inside a variant's interpreter (Python
3.7+, the standard library only; asv is never needed).

Two uses, both with this folder on sys.path (the statement worker's own folder):
- listing: `python -m perflab_asv DIR FILE [REGEX]` writes one JSON line per benchmark and parameter
  combination to FILE: {"name", "key", "module", "index", "kind", "dir", "skipped",
  "timeout"}, a timeraw_ benchmark's "code" (the Python it returns, dedented, after the setup
  it returns beside it: "raw_setup"), and one per module that failed to import, with its "error".
- measuring: a statement benchmark's set-up calls prepared(dir, module, key, index): the module is
  imported, the class instantiated, setup_cache run (once per process) and the setups run with
  the combination's parameters; it returns the benchmark's callable and its arguments for the
  statement to call. The teardowns run at exit. A mem_ benchmark's statement sizes what the call
  returns (deep_size); a timeraw_ one whose code could not be listed runs it (run_raw).
"""

import atexit
import gc
import importlib
import importlib.machinery
import inspect
import itertools
import json
import os
import re
import subprocess
import sys
import textwrap
import traceback
import types

# asv's benchmark kinds, by the prefix of a function's name
KINDS = (
    ("timeraw_", "timeraw"),
    ("time_", "time"),
    ("peakmem_", "peakmem"),
    ("mem_", "mem"),
    ("track_", "track"),
)
CONF = "asv.conf.json"


class SetupFailed(Exception):
    """The benchmark cannot run: its module, setup_cache or setup raised."""


def _suite_traceback():
    """The exception being handled, its traceback without this helper's and importlib's
    frames: the suite's own lines are what its author needs."""
    kind, error, trace = sys.exc_info()
    frames = [
        frame
        for frame in traceback.extract_tb(trace)
        if os.path.abspath(frame.filename) != os.path.abspath(__file__)
        and "importlib" not in frame.filename
    ]
    shown = traceback.format_list(frames) if frames else []
    lines = ["Traceback (most recent call last):\n"] + shown if shown else []
    hint = import_hint(error)
    text = "".join(lines + traceback.format_exception_only(kind, error)).rstrip()
    return text + "\n" + hint if hint else text


def benchmark_dir(directory):
    """The benchmark directory: DIR itself, or the one DIR's asv.conf.json names."""
    conf = os.path.join(directory, CONF)
    if not os.path.isfile(conf):
        return directory
    with open(conf) as source:
        text = source.read()
    return os.path.join(directory, json.loads(plain_json(text)).get("benchmark_dir", "benchmarks"))


_STRING = r'("(?:[^"\\]|\\.)*")'
_COMMENTS = re.compile(_STRING + r"|//[^\n]*|/\*.*?\*/", re.DOTALL)
_TRAILING_COMMAS = re.compile(_STRING + r"|,(?=\s*[\]}])")


def plain_json(text):
    """`text` without what asv's configuration allows beyond JSON: // and /* */ comments (also
    after a value on its line) and a comma before a closing bracket; strings kept as written."""
    for extra in (_COMMENTS, _TRAILING_COMMAS):  # comments first: one may follow a last comma
        text = extra.sub(lambda match: match.group(1) or "", text)
    return text


def _module_names(directory):
    """The modules under `directory` (packages too), as dotted names relative to it."""
    names = []
    for root, folders, files in os.walk(directory):
        folders[:] = sorted(
            f for f in folders if os.path.isfile(os.path.join(root, f, "__init__.py"))
        )
        relative = os.path.relpath(root, directory)
        prefix = "" if relative == "." else relative.replace(os.sep, ".") + "."
        for name in sorted(files):
            if name.endswith(".py") and name != "__init__.py":
                names.append(prefix + name[:-3])
    return names


class _PackageFinder:
    """Finds the benchmark package alone in its parent folder. Not the parent on sys.path: it
    is often the project's source tree (asv.conf.json beside the project's own package), whose
    unbuilt copy would shadow the installed one the benchmarks are meant to measure (asv finds
    its benchmark package the same way)."""

    def __init__(self, parent, package):
        self.parent = parent
        self.package = package

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.package:
            return None
        return importlib.machinery.PathFinder.find_spec(fullname, [self.parent], target)


def _import(directory, name):
    """Module `name` of the suite: inside its package when the directory is one (so that
    relative imports work, as under asv), else with the directory on sys.path."""
    directory = os.path.abspath(directory)
    if os.path.isfile(os.path.join(directory, "__init__.py")):
        parent, package = os.path.split(directory)
        if not any(
            isinstance(f, _PackageFinder) and (f.parent, f.package) == (parent, package)
            for f in sys.meta_path
        ):
            sys.meta_path.insert(0, _PackageFinder(parent, package))
        return importlib.import_module(package + "." + name)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    return importlib.import_module(name)


def import_hint(error, cwd=None):
    """A line for an ImportError of a package in the working directory (`cwd`: the current
    one), which asv's rule keeps off sys.path: its unbuilt source tree was imported anyway
    (through PYTHONPATH), or it is there but not installed; None for any other error."""
    name = getattr(error, "name", None) if isinstance(error, ImportError) else None
    if not name:
        return None
    cwd = os.path.abspath(cwd or os.getcwd())
    top = name.split(".")[0]
    if any(isinstance(f, _PackageFinder) and f.package == top for f in sys.meta_path):
        return None  # the benchmark package's own modules: the traceback says enough
    source_tree = os.path.join(cwd, top)
    # where `top` is imported from (a failed import left sys.modules without it)
    found = importlib.machinery.PathFinder.find_spec(top)
    origin = os.path.abspath(found.origin) if found is not None and found.origin else ""
    if "." in name and os.path.dirname(origin) == source_tree:
        return (
            "hint: %r was imported from the source tree in the working directory (%s), where "
            "it is not built: build it there, or install it for this interpreter and leave that "
            "directory off PYTHONPATH" % (top, source_tree)
        )
    here = [p for p in (source_tree, source_tree + ".py") if os.path.exists(p)]
    if name == top and found is None and here:
        return (
            "hint: %r is in the working directory (%s) but not installed for %s: perflab runs "
            "asv benchmarks as asv does, against the installed project, without the working "
            "directory on sys.path; install it (git= variants: each into its own checkout's "
            'environment, --build "python3 -m venv venv && venv/bin/pip install ." with '
            "python=venv/bin/python in each variant; a plain pip install would put both in one "
            "environment), or for pure Python give the variant env.PYTHONPATH=."
            % (top, here[0], sys.executable)
        )
    return None


def _kind(name):
    for prefix, kind in KINDS:
        if name.startswith(prefix):
            return kind
    return None


def _found(module, name):
    """(key, function, class or None) of the benchmarks of module `name`, in asv's order: the
    module's attributes as defined, a class's methods by name."""
    for attr, value in list(vars(module).items()):
        if attr.startswith("_"):
            continue
        if inspect.isclass(value) and not inspect.isabstract(value):
            for method, function in inspect.getmembers(value):
                if _kind(method) and callable(function):
                    yield "%s.%s.%s" % (name, attr, method), function, value
        elif inspect.isfunction(value) and _kind(attr):
            yield "%s.%s" % (name, attr), value, None


def _first(name, sources, default=None):
    for source in sources:
        if hasattr(source, name):
            return getattr(source, name)
    return default


def _params(sources):
    """asv's params as a list of lists (one parameter is a plain list) and their names."""
    params = _first("params", sources, [])
    if params and not isinstance(params[0], (list, tuple)):
        params = [params]
    names = _first("param_names", sources, None) or [
        "param%d" % (i + 1) for i in range(len(params))
    ]
    return [list(p) for p in params], list(names)


class _Benchmark:
    def __init__(self, module, key, function, cls):
        self.key = key
        self.kind = _kind(key.rsplit(".", 1)[1])
        self.module = module
        self.instance = cls() if cls is not None else None
        owner = self.instance if cls is not None else None
        self.function = getattr(owner, function.__name__) if owner is not None else function
        sources = [self.function] + ([self.instance] if owner is not None else []) + [module]
        self.params, self.param_names = _params(sources)
        self.timeout = _first("timeout", sources, None)
        # asv's order: setups from the outside in (module, class, the function's own
        # attribute), teardowns the other way round
        self.setups = [s.setup for s in sources[::-1] if hasattr(s, "setup")]
        self.teardowns = [s.teardown for s in sources if hasattr(s, "teardown")]
        self.setup_cache = _first("setup_cache", sources, None)

    def combinations(self):
        return list(itertools.product(*[range(len(p)) for p in self.params]))

    def name(self, index):
        if not self.params:
            return self.key
        shown = ", ".join(repr(self.params[i][j]) for i, j in enumerate(index))
        return "%s(%s)" % (self.key, shown)

    def arguments(self, index, cached):
        values = tuple(self.params[i][j] for i, j in enumerate(index))
        return cached + values

    def set_up(self, arguments):
        """False when a setup raises NotImplementedError: asv's way of skipping."""
        try:
            for setup in self.setups:
                setup(*arguments)
        except NotImplementedError:
            return False
        return True

    def tear_down(self, arguments):
        for teardown in self.teardowns:
            teardown(*arguments)


_CACHES = {}  # setup_cache's result by its owner, once per process


def _cached(benchmark):
    if benchmark.setup_cache is None:
        return ()
    owner = getattr(benchmark.setup_cache, "__qualname__", benchmark.key)
    owner = benchmark.module.__name__ + "." + owner
    if owner not in _CACHES:
        _CACHES[owner] = benchmark.setup_cache()
    return (_CACHES[owner],)


def _benchmarks(directory, name):
    module = _import(directory, name)
    return [_Benchmark(module, key, fn, cls) for key, fn, cls in _found(module, name)]


def listing(directory, pattern=None):
    """The suite's benchmarks as JSON-ready entries, one per parameter combination; with
    `pattern`, only those whose name it finds (so that only their setups run here)."""
    regex = re.compile(pattern) if pattern else None
    resolved = benchmark_dir(directory)
    entries = []
    for name in _module_names(resolved):
        try:
            benchmarks = _benchmarks(resolved, name)
        except Exception:
            error = _suite_traceback()
            entries.append({"name": name, "module": name, "dir": resolved, "error": error})
            continue
        for benchmark in benchmarks:
            for index in benchmark.combinations():
                entry = {
                    "name": benchmark.name(index),
                    "key": benchmark.key,
                    "module": name,
                    "index": list(index),
                    "kind": benchmark.kind,
                    "dir": resolved,
                    "timeout": benchmark.timeout,
                    "skipped": False,
                }
                if regex is not None and not regex.search(entry["name"]):
                    continue
                entry.update(_tried(benchmark, index))
                entries.append(entry)
    return entries


def _tried(benchmark, index):
    """What listing learns by setting a combination up: "skipped" where a setup raises
    NotImplementedError (asv's rule), and a timeraw_ benchmark's "code" (what it returns, run
    by `python -c` when measured). Any other failure is left to show when it is measured."""
    if benchmark.kind != "timeraw" and not benchmark.setups:
        return {}
    try:
        arguments = benchmark.arguments(index, _cached(benchmark))
        if not benchmark.set_up(arguments):
            return {"skipped": True}
        try:
            if benchmark.kind == "timeraw":
                code, setup = raw_code(benchmark.function(*arguments))
                return {"code": joined_raw_code(code, setup), "raw_setup": bool(setup.strip())}
        finally:
            benchmark.tear_down(arguments)
    except Exception:
        pass
    return {}


def prepared(directory, module, key, index):
    """(fn, args): the benchmark `key` of `module` in the suite in `directory` (already
    resolved), set up for parameter combination `index`; raises SetupFailed with the reason
    when it cannot (a module that fails to import raises its own error)."""
    try:
        found = next((b for b in _benchmarks(directory, module) if b.key == key), None)
        if found is None:
            raise SetupFailed("asv benchmark %s is not in %s" % (key, directory))
        arguments = found.arguments(tuple(index), _cached(found))
        ready = found.set_up(arguments)
    except SetupFailed:
        raise
    except Exception:
        raise SetupFailed("\n" + _suite_traceback()) from None
    if not ready:
        raise SetupFailed("its setup raised NotImplementedError (asv skips this combination)")
    atexit.register(found.tear_down, arguments)
    return found.function, arguments


# what asv's mem_ leaves out of an object's size, as shared rather than owned by it
_SHARED = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType)


def deep_size(value):
    """The bytes `value` holds, asv's mem_ figure: sys.getsizeof of it and of every object it
    reaches (gc's referents), each once, classes, modules and functions left out."""
    seen = set()
    total = 0
    pending = [value]
    while pending:
        item = pending.pop()
        if id(item) in seen or isinstance(item, _SHARED):
            continue
        seen.add(id(item))
        total += sys.getsizeof(item)
        pending.extend(gc.get_referents(item))
    return total


def raw_code(returned):
    """(code, setup) of what a timeraw_ benchmark returns, as asv reads it: the code, or a
    (code, setup) pair; each dedented (asv's rule: a benchmark may return an indented block)."""
    code, setup = returned if isinstance(returned, tuple) else (returned, "")
    return textwrap.dedent(str(code)), textwrap.dedent(str(setup))


def joined_raw_code(code, setup):
    """The one program `python -c` runs: the setup first, then the code. asv times the code
    alone inside the fresh process; a command is timed whole, so the setup is timed too."""
    return setup + "\n" + code if setup.strip() else code


def run_raw(returned):
    """A timeraw_ benchmark's code run as asv runs it: `python -c` in a fresh interpreter."""
    subprocess.run([sys.executable, "-c", joined_raw_code(*raw_code(returned))], check=True)


def main(argv):
    directory, target = argv[:2]
    lines = [json.dumps(entry) for entry in listing(directory, *argv[2:])]
    with open(target, "w") as out:
        out.write("".join(line + "\n" for line in lines))


if __name__ == "__main__":
    # `python -m` put the working directory first on sys.path; the suite is listed as it is
    # measured (the worker runs by its path, so without it), and as asv lists it
    if sys.path and sys.path[0] in ("", os.getcwd()):
        del sys.path[0]
    main(sys.argv[1:])
