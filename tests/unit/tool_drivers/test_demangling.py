"""C++ names demangled by c++filt, in one batch."""

from __future__ import annotations

from perflab.machine.fake_processes import FakeRunner as ScriptedRunner
from perflab.tool_drivers.demangling import CxxFiltDemangler


def FakeRunner(stdout: str) -> ScriptedRunner:  # noqa: N802
    return ScriptedRunner().on_run(r".", stdout=stdout)


def test_cxxfilt_is_batched_and_skips_plain_names() -> None:
    runner = FakeRunner("foo(int)\nbar()\n")
    names = CxxFiltDemangler(runner).demangle(["_Z3fooi", "main", "_Z3barv"])
    assert names == {"_Z3fooi": "foo(int)", "main": "main", "_Z3barv": "bar()"}
    assert len(runner.calls) == 1 and runner.calls[0][1] == "_Z3fooi\n_Z3barv\n"
