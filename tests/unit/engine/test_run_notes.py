"""What the engine says of a run besides its budget (engine/run_notes.py): the variants'
isolated caches, said only where they matter; processes left running; a failure as a note."""

from __future__ import annotations

from dataclasses import dataclass

from perflab.api import make_experiment
from perflab.engine.prepare.caches import IsolatedCaches
from perflab.engine.run_notes import (
    caches_matter,
    failure_note,
    native_fill_note,
    note_forked,
    note_isolated_caches,
    note_leftovers,
    unprobed_setup_note,
)
from perflab.measure.lens import Lens, MemorySink
from perflab.records.errors import BenchmarkFailedError
from perflab.records.kinds import Metric
from perflab.records.model import Severity

SUBJECT = "perflab.engine.run_notes"


@dataclass(frozen=True)
class Named:
    """Stands for a lens: the notes read its metric only."""

    metric: Metric


TIME_LENS: Lens = Named(Metric.TIME)  # type: ignore[assignment]


def test_caches_matter_for_two_variants_of_caching_code_or_their_own_cache() -> None:
    assert caches_matter(make_experiment(stmt="torch.compile(f)()", variants=["A", "B"]))
    assert not caches_matter(make_experiment(stmt="sum(range(9))", variants=["A", "B"]))
    assert not caches_matter(make_experiment(stmt="torch.compile(f)()", variants=["A"]))
    own = make_experiment(stmt="f()", variants=["A", "B env.NUMBA_CACHE_DIR=/tmp/n"])
    assert caches_matter(own)


def test_isolated_caches_are_facts_of_each_variant_and_one_note_where_they_matter() -> None:
    experiment = make_experiment(
        stmt="torch.compile(f)()", variants=["A", "B env.XDG_CACHE_HOME=/c"]
    )
    sink = MemorySink()
    note_isolated_caches(sink, experiment, IsolatedCaches())
    assert "XDG_CACHE_HOME" in sink.variant_info["A"]["isolated_caches"]
    assert "XDG_CACHE_HOME" not in sink.variant_info["B"]["isolated_caches"]
    (note,) = sink.notes
    assert note.message.startswith("each variant had its own fresh cache directories (")
    assert "not isolated where a variant sets its own: B sets XDG_CACHE_HOME" in note.message
    plain = MemorySink()
    note_isolated_caches(plain, make_experiment(stmt="pass", variants=["A", "B"]), IsolatedCaches())
    assert plain.notes == [] and set(plain.variant_info) == {"A", "B"}


def test_shared_caches_are_said_once() -> None:
    sink = MemorySink()
    note_isolated_caches(sink, make_experiment(stmt="pass"), IsolatedCaches(enabled=False))
    (note,) = sink.notes
    assert "--share-caches" in note.message and sink.variant_info == {}


def test_nothing_is_said_of_leftovers_or_forks_that_did_not_happen() -> None:
    sink = MemorySink()
    note_leftovers(sink, TIME_LENS, "b", 0)
    note_forked(sink, TIME_LENS, "b", None)
    assert sink.notes == []


def test_a_failure_is_a_warning_with_the_tools_output_and_the_fix() -> None:
    error = BenchmarkFailedError("exited 1", hint="fix it", variant="B", detail="Traceback ...")
    note = failure_note(error, "parse", TIME_LENS)
    assert note.severity is Severity.WARNING
    assert note.message == "failed: exited 1\nTraceback ..."
    assert (note.hint, note.variant, note.benchmark, note.metric) == (
        "fix it",
        "B",
        "parse",
        Metric.TIME,
    )
    assert failure_note(BenchmarkFailedError("x"), "b", None).metric is None


def test_the_native_fill_promises_valgrind_s_processes_the_code_only_where_it_serves_them() -> None:
    plain = native_fill_note("b1", {"B": ("XDG_CACHE_HOME",)}, 1.25)
    assert plain.benchmark == "b1" and plain.severity is Severity.INFO
    assert plain.message == (
        "B compiled code into XDG_CACHE_HOME: each variant ran its statement once natively "
        "first (1.2 s), so that processes under valgrind load what it compiled rather than "
        "compile it"
    )
    inductor = {"B": ("TORCHINDUCTOR_CACHE_DIR",)}
    refilled = native_fill_note("b1", inductor, 30.0, refilled=["B"], refill_s=8.6)
    assert (
        ", and B again with ATEN_CPU_CAPABILITY=avx2 into an inductor cache of valgrind's "
        "processes' own (8.6 s): valgrind hides AVX-512, and torch.compile keys its kernels on "
        "the vector ISA it sees, not its graphs, so that processes under valgrind load what it "
        "compiled rather than compile it"
    ) in refilled.message
    doubtful = native_fill_note("b1", {"B": ("NUMBA_CACHE_DIR",)}, 2.0, may_compile_again=["B"])
    assert "load what it compiled" not in doubtful.message
    assert doubtful.message.endswith(
        "first (2.0 s); valgrind hides AVX-512, so a JIT keyed on the CPU's features may "
        "compile again under valgrind, at valgrind's speed, for B"
    )
    both = native_fill_note(
        "b1", {"A": ("NUMBA_CACHE_DIR",), **inductor}, 2.0, refilled=["B"], may_compile_again=["A"]
    )
    assert "load what it compiled for B rather than compile it; " in both.message
    assert both.message.endswith("at valgrind's speed, for A")


def test_a_variant_the_probe_did_not_see_set_up_is_warned_about_up_front() -> None:
    # torch.compile vs eager: the probe ran eager (17 s natively); the compiled variant's set-up
    # and first call took 64 s natively, and 113 s of each process under valgrind
    note = unprobed_setup_note(
        "f(x)", ("eager", 17.0), {"eager": 18.0, "compiled": 64.0}, [("instructions", 64.0)]
    )
    assert note is not None and note.severity is Severity.WARNING
    assert "it timed eager's start-up, set-up and statement (17.0 s natively)" in note.message
    assert "run natively before valgrind, compiled's took 64 s (compiling" in note.message
    assert "eager's" not in note.message.split("natively),")[1]
    assert "instructions (planned 64 s)" in note.message
    assert "4-10x slower than natively" in note.message


def test_no_warning_where_the_probe_saw_the_set_up_or_nothing_runs_under_valgrind() -> None:
    # a set-up as heavy in every variant: the probe of the baseline priced it
    assert (
        unprobed_setup_note("s", ("a", 20.0), {"a": 21.0, "b": 25.0}, [("instructions", 90.0)])
        is None
    )
    # a short statement three times the probe's, but seconds apart: no set-up to speak of
    assert unprobed_setup_note("s", ("a", 0.5), {"b": 2.0}, [("instructions", 9.0)]) is None
    assert unprobed_setup_note("s", ("a", 17.0), {"b": 64.0}, []) is None
