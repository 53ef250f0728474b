"""The instructions lens without valgrind: options, fixed environment, loops, analysis."""

from __future__ import annotations

import json

import pytest

from perflab.lenses.instructions.counts import main_program
from perflab.lenses.instructions.measure import InstructionsLens
from perflab.machine.fake_processes import FakeRunner as ScriptedRunner
from perflab.measure.callgrind.artifacts import (
    KIND_COMMAND,
    KIND_EMPTY,
    KIND_INLINE_FRAMES,
    KIND_OBJECTS,
    KIND_STATEMENT,
)
from perflab.measure.callgrind.count import CallgrindCounter, CountOptions
from perflab.measure.callgrind.count_options import (
    choose_loops,
    refining_loops,
)
from perflab.measure.lens import LensAnalysis, LensContext, MemorySink, NullProgress
from perflab.records.errors import ToolUnavailableError
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Artifact, Benchmark, Experiment, Sample, Severity, Variant
from perflab.records.settings import Settings
from perflab.stats.summary import ratio_interval

# what this file tests, though most names it imports are other packages' (cross/test_layout.py)
SUBJECT = "perflab.lenses.instructions.measure"


def FakeRunner(returncode: int = 0, tools: tuple[str, ...] = ()) -> ScriptedRunner:  # noqa: N802
    return ScriptedRunner(tools=tools).on_run(
        r".", returncode=returncode, stdout="valgrind-3.19.0\n"
    )


@pytest.mark.parametrize(
    ("per_iteration", "loops"),
    [(10_000, 2000), (9_000, 2000), (3_000, 5000), (1e6, 20), (5e7, 1), (0, 10_000), (1, 10_000)],
)
def test_loops_follow_a_1_2_5_series_towards_a_fixed_instruction_budget(
    per_iteration: float, loops: int
) -> None:
    assert choose_loops(per_iteration) == loops


def test_a_second_calibration_pair_refines_many_loops_only() -> None:
    # torch.add (~9,800 instructions): 10 loops plus a 5,000-instruction residue read as 10,300
    # and chose 1,000 loops; a second pair of 100 or 200 loops brings it back to 2,000
    assert choose_loops(9_800 + 5_000 / 10) == 1000
    assert refining_loops(1000) == 100 and refining_loops(2000) == 200
    assert choose_loops(9_800 + 5_000 / 100) == 2000
    # heavy statements (few loops) are not calibrated twice
    assert refining_loops(100) is None and refining_loops(20) is None


def test_preflight_warns_about_avx512_where_native_code_runs_and_needs_valgrind() -> None:
    benchmarks = (
        Benchmark("pure", stmt="sorted(range(100))", setup="import json"),
        Benchmark("torch", stmt="torch.add(x, x)", setup="import torch; x = torch.ones(1)"),
        Benchmark("prog", cmd="./bench"),
    )
    experiment = Experiment(benchmarks, (Variant("a"),))
    lens = InstructionsLens(read_cpuinfo=lambda: "flags : avx512f\n")
    notes = lens.preflight(experiment, FakeRunner(tools=("valgrind", "vgdb")))
    # a pure-Python statement runs no CPU-dispatched code: no warning about it
    assert [(n.severity, n.benchmark) for n in notes] == [
        (Severity.WARNING, "torch"),
        (Severity.WARNING, "prog"),
    ]
    assert "AVX-512" in notes[0].message and "imports torch" in notes[0].message
    assert "runs a program" in notes[1].message
    with pytest.raises(ToolUnavailableError) as error:
        lens.preflight(experiment, FakeRunner())
    assert error.value.hint is not None and "apt-get install valgrind" in error.value.hint
    # statements need vgdb too: it switches callgrind on around the loop
    with pytest.raises(ToolUnavailableError, match="vgdb"):
        lens.preflight(experiment, FakeRunner(tools=("valgrind",)))


def test_ratio_interval_is_a_point_when_counts_repeat() -> None:
    assert ratio_interval([100.0, 100.0], [90.0, 90.0]) == (0.9, 0.9, 0.9)
    ratio, low, high = ratio_interval([100.0, 101.0], [90.0])
    assert low == pytest.approx(90 / 101) and high == pytest.approx(0.9)


def _dump(hint: str, eval_cost: int, append_cost: int) -> str:
    return f"""# callgrind format
cmd: python -u worker.py
desc: Trigger: dump {hint}
events: Ir
ob=(1) /usr/lib/libpython3.11.so.1.0
fl=(1) Python/ceval.c
fn=(1) _PyEval_EvalFrameDefault
100 {eval_cost}
fn=(2) list_append'2
5 {append_cost}
"""


def _statement_data(sink: MemorySink, variant: str, stmt_scale: int) -> None:
    """Per repeat: an empty-loop dump and a statement dump of 10 loops."""
    for generation in (0, 1):
        for kind, text in (
            (KIND_EMPTY, _dump("perflab-empty", 25, 0)),
            (KIND_STATEMENT, _dump("perflab-stmt", 85, 40 * stmt_scale)),
        ):
            sink.add_artifact(Artifact("b", variant, Metric.INSTRUCTIONS, kind, text, generation))
        net = 85 + 40 * stmt_scale - 25
        sink.add_sample(
            Sample(
                "b",
                variant,
                Metric.INSTRUCTIONS,
                "instructions",
                net,
                loops=10,
                generation=generation,
            )
        )


def test_analyse_compares_per_iteration_counts_from_stored_data_only() -> None:
    sink = MemorySink()
    _statement_data(sink, "before", 1)
    _statement_data(sink, "after", 2)
    experiment = Experiment(
        (Benchmark("b", stmt="x"),),
        (Variant("before"), Variant("after")),
        Settings().with_options(layers=(("lists", "^list_"),)),
    )
    analysis = InstructionsLens().analyse(
        Benchmark("b", stmt="x"),
        ["before", "after"],
        sink.data_for("b", Metric.INSTRUCTIONS),
        experiment,
    )
    (comparison,) = analysis.comparisons
    out = comparison.to_json()
    assert out["metric"] == "instructions"
    assert out["baseline_per_iteration"] == 10.0 and out["variant_per_iteration"] == 14.0
    assert out["ratio"] == out["ci_low"] == out["ci_high"] == pytest.approx(1.4)
    assert comparison.verdict is Verdict.SLOWER
    top = out["functions"][0]
    assert (top["name"], top["object"], top["baseline"], top["variant"], top["delta"]) == (
        "list_append",
        "libpython3.11.so.1.0",
        4.0,
        8.0,
        4.0,
    )
    assert out["inlining_changes"] == []
    assert out["layers"][0] == {"layer": "lists", "baseline": 4.0, "variant": 8.0, "delta": 4.0}


_INLINED = """events: Ir
positions: instr line
cmd: {cmd}
ob={obj}
fl=k.c
fn=kernel
0x10 4 200
0x14 5 800
fn=main
0x30 9 5
"""
_OUTLINED = """events: Ir
positions: instr line
cmd: {cmd}
ob={obj}
fl=k.c
fn=kernel
0x10 4 250
cfn=helper.isra.0
calls=100 0x40 2
0x14 5 800
fn=helper.isra.0
0x40 2 800
fn=main
0x30 9 5
"""
_FRAMES = {
    "a": '{{"{obj}": {{"0x14": [["helper", "h.h", 2], ["kernel", "/s/k.c", 5]]}}}}',
    "b": '{{"{obj}": {{"0x10": [["kernel", "/s/k.c", 4]]}}}}',
}


def _command_data(
    *,
    frames: bool,
    identities: tuple[str, str] = ("build-id:aa", "build-id:bb"),
    shell: bool = False,
) -> tuple[MemorySink, Experiment]:
    sink = MemorySink()
    sides = (("a", _INLINED, 1005, "/a/base"), ("b", _OUTLINED, 1055, "/b/noinline"))
    for (variant, text, value, obj), identity in zip(sides, identities, strict=True):
        dump = text.format(cmd=obj, obj=obj)
        if shell:  # through /bin/sh: the shell's own process is dumped too
            shell_dump = f"events: Ir\ncmd: /bin/sh -c {obj}\nob=/bin/dash\nfn=main\n1 9000\n"
            sink.add_artifact(Artifact("c", variant, Metric.INSTRUCTIONS, KIND_COMMAND, shell_dump))
        sink.add_artifact(Artifact("c", variant, Metric.INSTRUCTIONS, KIND_COMMAND, dump))
        sink.add_artifact(
            Artifact("c", variant, Metric.INSTRUCTIONS, KIND_OBJECTS, json.dumps({obj: identity}))
        )
        if frames:
            frame_json = _FRAMES[variant].format(obj=obj)
            sink.add_artifact(
                Artifact("c", variant, Metric.INSTRUCTIONS, KIND_INLINE_FRAMES, frame_json)
            )
        sink.add_sample(Sample("c", variant, Metric.INSTRUCTIONS, "instructions", value))
    experiment = Experiment((Benchmark("c", cmd="prog"),), (Variant("a"), Variant("b")))
    return sink, experiment


def _analyse(sink: MemorySink, experiment: Experiment) -> LensAnalysis:
    return InstructionsLens().analyse(
        Benchmark("c", cmd="prog"), ["a", "b"], sink.data_for("c", Metric.INSTRUCTIONS), experiment
    )


def test_analyse_of_a_command_claims_the_outlined_helper_from_debug_info() -> None:
    analysis = _analyse(*_command_data(frames=True))
    out = analysis.comparisons[0].to_json()
    (change,) = out["inlining_changes"]
    assert (change["function"], change["change"]) == ("helper", "outlined")
    assert change["sentence"].startswith("`helper` is now outlined: `kernel` calls it (100 calls")
    (diagnosis,) = out["diagnoses"]
    assert (diagnosis["claim"], diagnosis["function"]) == ("outlined", "helper")
    assert any(
        e.startswith("DWARF: helper inlined into kernel at k.c:5") for e in diagnosis["evidence"]
    )
    # the programs have different file names: their functions pair up under the program's role
    assert {f["object"] for f in out["functions"]} == {"[main]"}
    assert out["programs"] == {"baseline": "base", "variant": "noinline"}
    helper = next(f for f in out["functions"] if f["name"] == "helper")
    assert helper["parts"] == ["helper", "helper.isra.0"] or helper["parts"] == ["helper.isra.0"]
    assert not analysis.notes


def test_without_debug_info_no_claim_is_made_and_a_note_says_why() -> None:
    analysis = _analyse(*_command_data(frames=False))
    out = analysis.comparisons[0].to_json()
    assert out["inlining_changes"] == [] and out["diagnoses"] == []
    (unknown,) = out["cannot_tell"]
    assert unknown["functions"] == ["helper"]
    (note,) = analysis.notes
    assert (
        "cannot tell" in note.message and "no debug info for [main] (build with -g)" in note.message
    )


def test_byte_identical_objects_carry_no_claim_and_no_note() -> None:
    sink, experiment = _command_data(frames=True, identities=("build-id:same", "build-id:same"))
    analysis = _analyse(sink, experiment)
    out = analysis.comparisons[0].to_json()
    assert out["diagnoses"] == [] and out["cannot_tell"] == [] and not analysis.notes
    assert out["identical_objects"] == ["[main]"]


def test_a_command_through_the_shell_names_the_program_by_role() -> None:
    analysis = _analyse(*_command_data(frames=True, shell=True))
    out = analysis.comparisons[0].to_json()
    assert out["programs"] == {"baseline": "base", "variant": "noinline"}
    names = [(f["name"], f["object"]) for f in out["functions"]]
    assert ("kernel", "[main]") in names and ("main", "dash") in names
    assert len(names) == len(set(names))
    assert main_program([("/bin/sh", 9000.0), ("./prog", 10.0)]) == "prog"
    assert main_program([("/bin/sh", 9000.0)]) == "sh"


def test_instruction_verdicts_use_the_experiment_band_as_every_lens_does() -> None:
    sink = MemorySink()
    for variant, value in (("a", 100_000.0), ("b", 99_880.0)):
        sink.add_sample(Sample("c", variant, Metric.INSTRUCTIONS, "instructions", value))
    experiment = Experiment((Benchmark("c", cmd="prog"),), (Variant("a"), Variant("b")))
    (comparison,) = _analyse(sink, experiment).comparisons
    assert comparison.verdict is Verdict.EQUIVALENT
    assert comparison.to_json()["equivalence_band"] == 0.01
    narrow = Experiment(
        experiment.benchmarks, experiment.variants, Settings(equivalence_band=0.001)
    )
    (comparison,) = _analyse(sink, narrow).comparisons
    assert comparison.verdict is Verdict.FASTER


def _instr_dump(hint: str, rows: str) -> str:
    return f"""# callgrind format
cmd: python -u worker.py
desc: Trigger: dump {hint}
positions: instr line
events: Ir
ob=(1) /lib/libpython3.11.so.1.0
fl=(1) Python/ceval.c
fn=(1) _PyEval_EvalFrameDefault
{rows}
"""


def test_statements_subtract_the_empty_loop_per_instruction_for_the_inline_aware_view() -> None:
    sink = MemorySink()
    frames = json.dumps(
        {"/lib/libpython3.11.so.1.0": {"0x20": [["list_append", "l.c", 3], ["eval", "c.c", 9]]}}
    )
    for variant in ("a", "b"):
        empty = _instr_dump("perflab-empty-0", "0x10 1 30")
        stmt = _instr_dump("perflab-stmt-0", "0x10 1 30\n0x20 2 50")
        for kind, text in ((KIND_EMPTY, empty), (KIND_STATEMENT, stmt)):
            sink.add_artifact(Artifact("s", variant, Metric.INSTRUCTIONS, kind, text, 0))
        sink.add_artifact(Artifact("s", variant, Metric.INSTRUCTIONS, KIND_INLINE_FRAMES, frames))
        sink.add_sample(Sample("s", variant, Metric.INSTRUCTIONS, "instructions", 50, loops=10))
    experiment = Experiment((Benchmark("s", stmt="x"),), (Variant("a"), Variant("b")))
    (comparison,) = (
        InstructionsLens()
        .analyse(
            Benchmark("s", stmt="x"),
            ["a", "b"],
            sink.data_for("s", Metric.INSTRUCTIONS),
            experiment,
        )
        .comparisons
    )
    out = comparison.to_json()
    assert out["attribution"] == "inline-aware"
    # the empty loop's instruction at 0x10 cancels out; 0x20 is list_append's, inlined
    assert [(f["name"], f["baseline"]) for f in out["functions"]] == [("list_append", 5.0)]
    assert out["diagnoses"] == [] and out["verdict"] == "equivalent"


def test_worker_ops_outside_valgrind_say_why_and_count_nothing() -> None:
    """The client-request ops run here natively: valgrind's special instruction sequence is a
    no-op on a real CPU, so the probe finds no valgrind (and the parent falls back to vgdb), and a
    counted loop without a successful probe is refused, never run uncounted."""
    import platform

    from perflab.worker import callgrind_ops as worker_ops

    probe = worker_ops.callgrind_probe(None, {"op": "callgrind_probe"})
    assert probe["ok"] and probe["requests"] is False
    if platform.machine() == "x86_64":
        assert probe["why"] == "the worker is not running under valgrind"
    else:
        assert "x86-64 only" in probe["why"]
    reply = worker_ops.callgrind_sample(None, {"loops": 1, "empty": True, "dump": "x"})
    assert reply["ok"] is False and reply["phase"] == "protocol"
    # a fork server's discard says the same, and switches nothing
    assert worker_ops.callgrind_discard(None, {"op": "callgrind_discard"}) == probe


def test_the_lens_hands_the_counter_what_the_experiment_asks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """cache_sim and region are this lens's options, analysis_cache the symbolising lenses'
    shared one: the lens reads them and passes them on, keeping its own counting options."""
    seen: list[CountOptions] = []

    def count(self: CallgrindCounter, benchmark: Benchmark, context: LensContext) -> None:
        seen.append(self.options)

    monkeypatch.setattr(CallgrindCounter, "count", count)
    benchmark = Benchmark("b", cmd="./b")
    lens = InstructionsLens(CountOptions(Metric.INSTRUCTIONS, repeats=1))
    for settings in (
        Settings(),
        Settings().with_options(cache_sim=True, region="kernel", analysis_cache=False),
    ):
        experiment = Experiment((benchmark,), (Variant("a"), Variant("b")), settings)
        context = LensContext(experiment, FakeRunner(), MemorySink(), NullProgress(), None, "py")
        lens.measure(benchmark, context)
    asked = [(o.cache_sim, o.region, o.analysis_cache, o.repeats) for o in seen]
    assert asked == [(False, None, True, 1), (True, "kernel", False, 1)]
    assert lens.counter.options.cache_sim is False  # the lens's own counter is left as given
