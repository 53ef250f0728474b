"""The instructions lens without valgrind: options, fixed environment, loops, analysis."""

from __future__ import annotations

import pytest

from perflab.errors import ToolUnavailableError
from perflab.lenses.instructions.measure import (
    CACHE_GEOMETRY,
    KIND_COMMAND,
    KIND_EMPTY,
    KIND_STATEMENT,
    InstructionsLens,
    callgrind_options,
    choose_loops,
    cpu_has_avx512,
    environment_bytes,
    padded_environment,
    padding_target,
    ratio_interval,
)
from perflab.measure.lens import MemorySink
from perflab.model import (
    Artifact,
    Benchmark,
    Experiment,
    Metric,
    Sample,
    Settings,
    Severity,
    Variant,
    Verdict,
)
from perflab.proc import FakeRunner as ScriptedRunner


def FakeRunner(returncode: int = 0) -> ScriptedRunner:  # noqa: N802
    return ScriptedRunner().on_run(r".", returncode=returncode, stdout="valgrind-3.19.0\n")


@pytest.mark.parametrize(
    ("per_iteration", "loops"),
    [(10_000, 2000), (9_000, 2000), (3_000, 5000), (1e6, 20), (5e7, 1), (0, 10_000), (1, 10_000)],
)
def test_loops_follow_a_1_2_5_series_towards_a_fixed_instruction_budget(
    per_iteration: float, loops: int
) -> None:
    assert choose_loops(per_iteration) == loops


def test_environments_are_padded_to_the_same_size() -> None:
    small, large = {"A": "1"}, {"A": "1", "ATEN_CPU_CAPABILITY": "avx2"}
    target = padding_target([small, large])
    assert target % 256 == 0
    assert environment_bytes(padded_environment(small, target)) == target
    assert environment_bytes(padded_environment(large, target)) == target


def test_callgrind_options_switch_on_only_what_is_asked() -> None:
    statement = callgrind_options(
        out_file="/t/out.%p",
        instr_at_start=False,
        vgdb_prefix="/t/vgdb",
        cache_sim=False,
        dump_instr=False,
        region=None,
        trace_children=False,
    )
    assert "--instr-atstart=no" in statement
    assert "--vgdb-prefix=/t/vgdb" in statement
    assert not any(o.startswith("--cache-sim") for o in statement)
    command = callgrind_options(
        out_file="/t/out.%p",
        instr_at_start=True,
        vgdb_prefix=None,
        cache_sim=True,
        dump_instr=True,
        region="kernel",
        trace_children=True,
    )
    assert {"--cache-sim=yes", "--branch-sim=yes", "--dump-instr=yes", "--vgdb=no"} <= set(command)
    assert f"--D1={CACHE_GEOMETRY['D1']}" in command
    region = {"--toggle-collect=kernel", "--collect-atstart=no", "--trace-children=yes"}
    assert region <= set(command)


def test_avx512_is_recognised_in_cpuinfo() -> None:
    assert cpu_has_avx512("processor : 0\nflags : fpu sse avx2 avx512f avx512bw\n")
    assert not cpu_has_avx512("processor : 0\nflags : fpu sse avx2\n")


def test_preflight_warns_about_avx512_and_needs_valgrind(monkeypatch: pytest.MonkeyPatch) -> None:
    experiment = Experiment((Benchmark("b", stmt="pass"),), (Variant("a"),))
    lens = InstructionsLens(read_cpuinfo=lambda: "flags : avx512f\n")
    monkeypatch.setattr(
        "perflab.lenses.instructions.measure.which", lambda tool: f"/usr/bin/{tool}"
    )
    notes = lens.preflight(experiment, FakeRunner())
    assert [n.severity for n in notes] == [Severity.WARNING]
    assert "AVX-512" in notes[0].message
    monkeypatch.setattr("perflab.lenses.instructions.measure.which", lambda tool: None)
    with pytest.raises(ToolUnavailableError) as error:
        lens.preflight(experiment, FakeRunner())
    assert error.value.hint is not None and "apt-get install valgrind" in error.value.hint


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
        Settings(layers=(("lists", "^list_"),)),
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


def test_analyse_of_a_command_finds_the_outlined_helper() -> None:
    inlined = """events: Ir
cmd: /a/prog
ob=/a/prog
fl=k.c
fn=kernel
1 1000
fn=main
1 5
"""
    outlined = """events: Ir
cmd: /b/prog
ob=/b/prog
fl=k.c
fn=kernel
1 250
cfn=helper
calls=100 1
1 800
fn=helper
1 800
fn=main
1 5
"""
    sink = MemorySink()
    for variant, text, value in (("a", inlined, 1005), ("b", outlined, 1055)):
        sink.add_artifact(Artifact("c", variant, Metric.INSTRUCTIONS, KIND_COMMAND, text))
        sink.add_sample(Sample("c", variant, Metric.INSTRUCTIONS, "instructions", value))
    experiment = Experiment((Benchmark("c", cmd="prog"),), (Variant("a"), Variant("b")))
    analysis = InstructionsLens().analyse(
        Benchmark("c", cmd="prog"), ["a", "b"], sink.data_for("c", Metric.INSTRUCTIONS), experiment
    )
    out = analysis.comparisons[0].to_json()
    assert out["inlining_changes"][0]["function"] == "helper"
    assert out["inlining_changes"][0]["change"] == "outlined"
    assert out["inlining_changes"][0]["sentence"] == (
        "`helper` is now outlined: +800 self; its caller `kernel` \u2212750"
    )
    assert {f["object"] for f in out["functions"]} == {"[main]"}
