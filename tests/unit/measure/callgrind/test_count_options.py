"""The callgrind counter counts with what its `CountOptions` say, never with a lens's option
read from the experiment's settings: a lens hands it `metric`, `cache_sim`, `region` and
`analysis_cache` as values."""

from __future__ import annotations

from perflab.machine.fake_processes import FakeRunner
from perflab.measure.callgrind import workers as callgrind_workers
from perflab.measure.callgrind.count import CallgrindCounter, CountOptions
from perflab.measure.callgrind.count_options import CountedWith, CountRun
from perflab.measure.layout import LAYOUT_PADDING_VARIABLE, environment_bytes
from perflab.measure.lens import LensContext, MemorySink, NullProgress
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Experiment, Variant
from perflab.records.settings import Settings
from perflab.tool_drivers.valgrind import CACHE_GEOMETRY

BENCHMARK = Benchmark("b", cmd="./b")


def _context(settings: Settings) -> LensContext:
    experiment = Experiment((BENCHMARK,), (Variant("a"), Variant("b", env={"X": "1"})), settings)
    return LensContext(experiment, FakeRunner(), MemorySink(), NullProgress(), None, "python3")


def test_valgrind_is_asked_for_what_the_options_say_whatever_the_settings_hold() -> None:
    # settings that say the opposite: the counter no longer looks there
    context = _context(Settings().with_options(cache_sim=False, region="elsewhere"))
    run = CountRun(BENCHMARK, Variant("a"), context, {}, Metric.INSTRUCTIONS)
    options = CountOptions(Metric.INSTRUCTIONS, cache_sim=True, region="kernel")
    argv = callgrind_workers.command_under_callgrind(
        options, run, "/tmp/d", "/tmp/d/report.json", dump_instr=False, shell=False
    )
    assert "--cache-sim=yes" in argv and "--toggle-collect=kernel" in argv
    plain = callgrind_workers.command_under_callgrind(
        CountOptions(Metric.INSTRUCTIONS),
        run,
        "/tmp/d",
        "/tmp/d/report.json",
        dump_instr=False,
        shell=False,
    )
    assert not any(a.startswith(("--cache-sim", "--toggle-collect")) for a in plain)


def test_the_variants_counted_are_those_asked_for_with_the_geometry_the_options_fix() -> None:
    context = _context(Settings())
    simulated = CallgrindCounter(CountOptions(Metric.INSTRUCTIONS, cache_sim=True))
    runs = simulated.planned_runs(BENCHMARK, context)
    assert [run.variant.name for run in runs] == ["a", "b"]
    assert all(run.counted_with.cache_geometry == dict(CACHE_GEOMETRY) for run in runs)
    (alone,) = simulated.planned_runs(BENCHMARK, context, (Variant("b", env={"X": "1"}),))
    assert alone.variant.name == "b"
    plain = (
        CallgrindCounter(CountOptions(Metric.INSTRUCTIONS))
        .planned_runs(BENCHMARK, context)[0]
        .counted_with
    )
    assert "cache_geometry" not in plain.to_json()


def test_a_variant_counted_alone_is_padded_as_if_counted_with_the_others() -> None:
    # the memory lens counts one variant a call: its stack must start where it would have
    # started beside the experiment's largest environment
    experiment = Experiment(
        (BENCHMARK,), (Variant("a"), Variant("b", env={"LONG_NAME": "x" * 300})), Settings()
    )
    context = LensContext(experiment, FakeRunner(), MemorySink(), NullProgress(), None, "python3")
    together = [
        run.env
        for run in CallgrindCounter(CountOptions(Metric.INSTRUCTIONS)).planned_runs(
            BENCHMARK, context
        )
    ]
    (alone,) = CallgrindCounter(CountOptions(Metric.INSTRUCTIONS)).planned_runs(
        BENCHMARK, context, (experiment.variants[0],)
    )
    assert alone.env == together[0]
    sizes = {environment_bytes(env) for env in (*together, alone.env)}
    assert len(sizes) == 1 and LAYOUT_PADDING_VARIABLE in alone.env
    assert alone.counted_with.environment_bytes == sizes.pop()


def test_a_lens_counting_one_variant_a_call_starts_every_variant_alike() -> None:
    # one measuring CPU (parallel off): two variants of 2 processes do not fit at once, so
    # every variant is forked, decided once rather than by the CPUs free at each call
    context = _context(Settings())
    alone = CallgrindCounter(CountOptions(Metric.INSTRUCTIONS, processes=2, parallel=False))
    decided = alone.started_alike(context, compared=2)
    assert decided.options.fork is True
    # a fork the options already fix stays as it is
    fixed = CallgrindCounter(CountOptions(Metric.INSTRUCTIONS, fork=False))
    assert fixed.started_alike(context, compared=2) is fixed


def test_the_counts_are_filed_under_the_metric_the_options_name() -> None:
    context = _context(Settings())
    memory = Metric("memory")
    (run, _) = CallgrindCounter(CountOptions(metric=memory)).planned_runs(BENCHMARK, context)
    sample = run.sample("instructions", 1.0, loops=1, generation=0, block=0, cpu=None)
    assert (run.metric, sample.metric) == (memory, memory)


def test_what_a_variant_was_counted_with_is_stored_in_the_order_it_is_learnt() -> None:
    """A stored variant info keeps its keys in the order they first came: the JSON is the one
    the counter wrote while it kept a dict."""
    counted = CountedWith(python_hash_seed="0", aslr="off", environment_bytes=1024, forked=False)
    assert list(counted.to_json()) == ["PYTHONHASHSEED", "aslr", "environment_bytes", "forked"]
    counted.cpus.append(None)  # unpinned: the first job's CPU is said to be none
    counted.loops_by_process["1"] = 40
    counted.collection_toggled = False  # a False is learnt, unlike None
    stored = counted.to_json()
    assert list(stored)[4:] == ["loops_by_process", "collection_toggled", "cpus", "cpu"]
    assert (stored["cpus"], stored["cpu"]) == ([None], None)
