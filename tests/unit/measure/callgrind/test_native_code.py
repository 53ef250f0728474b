"""Which benchmarks the notes about native code and compile caches apply to."""

from __future__ import annotations

from perflab.engine.run_notes import caches_matter
from perflab.measure.callgrind.native_code import native_code
from perflab.records.model import Benchmark, Experiment, Variant

# what this file tests, though most names it imports are other packages' (cross/test_layout.py)
SUBJECT = "perflab.measure.callgrind.native_code"


def test_pure_python_statements_run_no_cpu_dispatched_code() -> None:
    assert (
        native_code(Benchmark("b", stmt="sorted(x)", setup="import json, re; x = [3, 1]")) is None
    )
    assert native_code(Benchmark("b", stmt="sum(range(9))")) is None
    assert native_code(Benchmark("b", stmt="t.add(t)", setup="import torch as t")) == (
        "it imports torch"
    )
    assert native_code(Benchmark("b", stmt="h()", setup="from hashlib import sha256 as h"))
    assert native_code(Benchmark("b", cmd="./bench")) == "it runs a program"
    assert native_code(Benchmark("b", stmt="__import__(name)", setup="name = 'x'")) is not None


def test_compile_caches_matter_for_compiling_code_with_two_variants() -> None:
    two = (Variant("A"), Variant("B"))
    torch = Benchmark("b", stmt="f(x)", setup="import torch; f = torch.compile(g)")
    assert caches_matter(Experiment((torch,), two))
    assert not caches_matter(Experiment((torch,), two[:1]))  # nothing to share with
    assert not caches_matter(Experiment((Benchmark("c", cmd="./bench"),), two))
    own = (Variant("A"), Variant("B", env={"XDG_CACHE_HOME": "/tmp"}))
    assert caches_matter(Experiment((Benchmark("c", cmd="./bench"),), own))
