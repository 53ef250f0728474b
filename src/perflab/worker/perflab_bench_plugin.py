"""perflab's `benchmark` fixture for pytest-benchmark suites, run inside a variant's interpreter
(Python 3.7+, the standard library and pytest; pytest-benchmark is never needed).

Two uses, both with this folder on sys.path (the statement worker's own folder):
- listing: `python -m pytest --collect-only -q -p perflab_bench_plugin PATH [-k EXPR]` with
  PERFLAB_PYTEST_LIST=FILE writes one JSON line per test that uses the `benchmark` fixture,
  {"nodeid", "path", "rootdir"} (paths relative to the directory pytest ran in), and one per
  file that failed to collect, with its "error".
- measuring: a statement benchmark's set-up calls benchmarked(path, nodeid, rootdir): pytest
  runs that one test in this process, main thread, up to its benchmark(...) call, whose
  callable and arguments it returns for the statement to call. The test's fixtures stay set up
  while the worker measures and are torn down at exit, as pytest-benchmark tears them down
  after its rounds.
"""

import ast
import atexit
import json
import os
import sys
import traceback

import pytest

LIST_ENV = "PERFLAB_PYTEST_LIST"

# pytest's own plugins that would take the worker's descriptors: fd capture swaps stdout and
# stderr, faulthandler re-points the worker's crash dumps; the cache would write into the suite.
# pytest-benchmark and pytest-codspeed define `benchmark` too: theirs would replace this one.
_PYTEST_ARGS = (
    "-s",
    "-p",
    "no:cacheprovider",
    "-p",
    "no:faulthandler",
    "-p",
    "no:benchmark",
    "-p",
    "no:codspeed",
    "-p",
    "no:terminal",
)


class TestFailed(Exception):
    """The test failed, was skipped or never called the fixture: this benchmark cannot run."""


class _State:
    listing = []  # JSON lines of the listing
    collect_errors = []  # (nodeid, text) of collectors that failed
    captured = None  # (fn, args, kwargs) of the benchmark call


# pytest-benchmark's own options, accepted and ignored: a project's configuration often passes
# some (addopts = --benchmark-disable), which pytest refuses when no plugin defines them
_FLAG_OPTIONS = (
    "disable", "disable-gc", "enable", "only", "skip", "autosave", "save-data", "verbose", "quiet",
)  # fmt: skip
_VALUE_OPTIONS = (
    "min-time", "max-time", "min-rounds", "timer", "calibration-precision", "warmup-iterations",
    "storage", "sort", "group-by", "columns", "name", "time-unit", "json", "save", "cprofile",
    "cprofile-loops", "cprofile-top",
)  # fmt: skip
_OPTIONAL_VALUE_OPTIONS = ("warmup", "histogram", "compare", "netrc", "cprofile-dump")


# pytest's own plugins the worker turns off whose options a project's configuration often
# passes (addopts = -ra -l --ff): still defined, so that pytest parses them, and unused
_OFF_PLUGINS_WITH_OPTIONS = ("terminal", "cacheprovider")


def _define_options_of_plugins_turned_off(parser, pluginmanager):
    import importlib

    for name in _OFF_PLUGINS_WITH_OPTIONS:
        if not pluginmanager.is_blocked(name):
            continue
        try:
            importlib.import_module("_pytest." + name).pytest_addoption(parser)
        except (ImportError, AttributeError, ValueError):  # moved, or defined another way
            pass


def pytest_addoption(parser, pluginmanager):
    """Defines pytest-benchmark's options so a suite's configuration still parses; perflab ignores
    their values."""
    _define_options_of_plugins_turned_off(parser, pluginmanager)
    group = parser.getgroup("perflab", "pytest-benchmark's options (perflab ignores them)")
    for names, how in (
        (_FLAG_OPTIONS, {"action": "store_true"}),
        (_VALUE_OPTIONS, {}),
        (_OPTIONAL_VALUE_OPTIONS, {"nargs": "?", "const": True}),
    ):
        for name in names:
            try:
                group.addoption("--benchmark-" + name, dest="perflab_ignored_" + name, **how)
            except ValueError:  # defined by a plugin that was not turned off
                pass
    try:
        group.addoption("--benchmark-compare-fail", action="append", dest="perflab_ignored_fail")
    except ValueError:
        pass


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "benchmark(**options): pytest-benchmark's options (perflab ignores them)"
    )


def _relative(path):
    # inside the folder pytest ran in: relative, so that each checkout finds its own copy;
    # outside it: absolute, the one file every variant runs (a suite kept beside the repository)
    relative = os.path.relpath(str(path), os.getcwd())
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return os.path.abspath(str(path))
    return relative


def _rootdir(config):
    return getattr(config, "rootpath", None) or str(config.rootdir)


def pytest_collectreport(report):
    if report.failed:
        _State.collect_errors.append((report.nodeid, str(report.longreprtext)))


def pytest_collection_finish(session):
    """When perflab asks for the list, writes each test that uses the `benchmark` fixture as a JSON
    line."""
    target = os.environ.get(LIST_ENV)
    if not target:
        return
    rootdir = _rootdir(session.config)
    lines = []
    for item in session.items:
        if "benchmark" not in getattr(item, "fixturenames", ()):
            continue
        path = getattr(item, "path", None) or item.fspath
        entry = {"nodeid": item.nodeid, "path": _relative(path), "rootdir": _relative(rootdir)}
        lines.append(json.dumps(entry))
    for nodeid, error in _State.collect_errors:
        path = os.path.join(str(rootdir), nodeid.split("::")[0])
        entry = {"nodeid": nodeid, "path": _relative(path), "rootdir": _relative(rootdir)}
        entry["error"] = error
        lines.append(json.dumps(entry))
    with open(target, "w") as out:
        out.write("".join(line + "\n" for line in lines))


class BenchmarkFixture:
    """pytest-benchmark's fixture as perflab needs it: the first call is captured, run once, and
    its result returned, so the test's asserts on it still hold. perflab owns the rounds."""

    def __init__(self, node):
        self.name = node.name
        self.fullname = node.nodeid
        self.group = None
        self.extra_info = {}
        self.disabled = False
        self.stats = None

    def __repr__(self):
        return "benchmark"  # as an assert's report shows the call: benchmark(sorted, data)

    def _capture(self, fn, args, kwargs):
        if _State.captured is not None:
            raise TestFailed(
                "the test used the benchmark fixture twice (pytest-benchmark refuses that too)"
            )
        _State.captured = (fn, tuple(args), dict(kwargs))
        return fn(*args, **kwargs)

    def __call__(self, function_to_benchmark, *args, **kwargs):
        return self._capture(function_to_benchmark, args, kwargs)

    def pedantic(
        self,
        target,
        args=(),
        kwargs=None,
        setup=None,
        teardown=None,
        rounds=1,
        warmup_rounds=0,
        iterations=1,
    ):
        kwargs = kwargs or {}
        if setup is None and teardown is None:
            return self._capture(target, args, kwargs)

        # set-up and teardown run with every call: inside the measured loop, unlike
        # pytest-benchmark (a call that consumes its input needs a fresh one each time)
        def each_round():
            call_args, call_kwargs = args, kwargs
            if setup is not None:
                setup_arguments = setup()
                if setup_arguments is not None:
                    call_args, call_kwargs = setup_arguments
            result = target(*call_args, **call_kwargs)
            if teardown is not None:
                teardown(*call_args, **call_kwargs)
            return result

        return self._capture(each_round, (), {})

    def weave(self, target, **options):
        raise TestFailed("perflab does not measure benchmark.weave (pytest-benchmark's aspects)")

    patch = weave


@pytest.fixture
def benchmark(request):
    return BenchmarkFixture(request.node)


def _failure_text(item):
    """The failure as pytest reports it, else as Python does."""
    try:
        info = pytest.ExceptionInfo.from_current()
        if isinstance(info.value, pytest.skip.Exception):
            return "the test was skipped: %s" % (info.value.msg,)
        return str(item.repr_failure(info))
    except Exception:
        return traceback.format_exc()


def _new_session(config):
    from _pytest.main import Session

    if hasattr(Session, "from_config"):
        return Session.from_config(config)
    return Session(config)  # pragma: no cover - pytest < 6.2


_COLLECTED = {}  # (path, rootdir): (config, session), once per process


def _collected(path, rootdir):
    """pytest configured and the file `path` collected, once per process: in a fork server
    (perflab_preload) before it forks, so that its children run the test alone."""
    key = (path, rootdir)
    if key not in _COLLECTED:
        from _pytest.config import _prepareconfig

        args = [path, "--rootdir=" + rootdir] + list(_PYTEST_ARGS)
        config = _prepareconfig(args, plugins=[sys.modules[__name__]])
        config.option.tbstyle = "short"  # a failure's report: its lines, not its arguments'
        config._do_configure()
        atexit.register(config._ensure_unconfigure)
        session = _new_session(config)
        config.hook.pytest_sessionstart(session=session)
        config.hook.pytest_collection(session=session)
        _COLLECTED[key] = (config, session)
    return _COLLECTED[key]


def _benchmarked_calls(setup):
    """The (path, nodeid, rootdir) of each benchmarked(...) call of a set-up's source."""
    for node in ast.walk(ast.parse(setup)):
        name = getattr(node, "func", None)
        if getattr(name, "attr", getattr(name, "id", None)) != "benchmarked":
            continue
        try:
            arguments = tuple(ast.literal_eval(a) for a in node.args)
        except ValueError:
            continue
        if len(arguments) == 3:
            yield arguments


def perflab_preload(setup):
    """In a fork server (the statement worker's preload): pytest's start-up and the test
    file's collection (its imports, conftest files, plugins), done once for the children it
    forks; each child still sets the test up and runs it, its objects its own. A collection
    that raises is left to each child, which reports it as the test's failure."""
    for path, _, rootdir in _benchmarked_calls(setup):
        try:
            _collected(path, rootdir)
        except Exception:
            _COLLECTED.pop((path, rootdir), None)


def benchmarked(path, nodeid, rootdir):
    """(fn, args, kwargs) that the test `nodeid` in file `path` benchmarks, its fixtures set
    up; raises TestFailed with pytest's report when it cannot."""
    config, session = _collected(path, rootdir)
    item = next((i for i in session.items if i.nodeid == nodeid), None)
    if item is None:
        errors = "\n".join(text for _, text in _State.collect_errors)
        raise TestFailed(
            errors or "pytest found no test %s in %s (rootdir %s)" % (nodeid, path, rootdir)
        )
    atexit.register(_teardown, config, session, item)
    try:
        item.ihook.pytest_runtest_setup(item=item)
        item.ihook.pytest_runtest_call(item=item)
    except BaseException as error:
        if isinstance(error, KeyboardInterrupt):
            raise
        raise TestFailed(_failure_text(item)) from None
    if _State.captured is None:
        raise TestFailed("the test never called its benchmark fixture")
    return _State.captured


def _teardown(config, session, item):
    """The test's fixtures torn down and pytest's session finished, as pytest would."""
    try:
        item.ihook.pytest_runtest_teardown(item=item, nextitem=None)
        config.hook.pytest_sessionfinish(session=session, exitstatus=0)
    except Exception:
        traceback.print_exc()
