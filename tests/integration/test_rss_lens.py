"""The rss lens with real workers and a real command."""

from __future__ import annotations

import sys

import pytest

from perflab import api
from perflab.records.kinds import Verdict
from perflab.tool_output.peak_memory import MAXRSS_KB, PEAK_ALLOC_BYTES

pytestmark = pytest.mark.integration


def test_a_statement_that_allocates_more_shows_it() -> None:
    experiment = api.make_experiment(
        stmt="x = [0] * n",
        setup="import os; n = int(os.environ['N'])",
        variants=["small env.N=1000", "large env.N=100000"],
        metrics="rss",
        min_generations=2,
        sample_target_ms=1,
        seed=1,
    )
    result = api.run(experiment, store_path=None).raise_on_failure()
    by_event = {c.event: c for c in result.comparisons}
    peak = by_event[PEAK_ALLOC_BYTES]
    assert peak.ratio > 50 and peak.verdict is Verdict.SLOWER  # 100x the list
    assert peak.baseline_value > 8000  # 1000 pointers
    assert by_event[MAXRSS_KB].baseline_value > 1000  # kB: a Python process


def test_a_command_that_touches_more_memory_shows_it() -> None:
    experiment = api.make_experiment(
        cmd=f"{sys.executable} -c 'bytearray($mb * 2**20)'",
        params={"mb": ["1"]},
        variants=["small", 'large cmd="' + sys.executable + " -c 'bytearray(200 * 2**20)'\""],
        metrics="rss",
        min_generations=2,
        seed=1,
    )
    result = api.run(experiment, store_path=None).raise_on_failure()
    (comparison,) = result.comparisons
    assert comparison.event == MAXRSS_KB
    assert comparison.ratio > 3 and comparison.verdict is Verdict.SLOWER


def test_tracemalloc_s_peak_of_native_tensors_is_no_verdict() -> None:
    """torch allocates a tensor's memory itself: tracemalloc's peak is a few hundred bytes of
    Python objects in both variants (a relu into a new tensor of 16 MB, and one copied into
    another), while peak RSS grows by the copy. The peak allocated gets no verdict, and a note
    says why."""
    pytest.importorskip("torch")
    experiment = api.make_experiment(
        stmt="y = f(x)",
        setup="import os, torch; x = torch.randn(4 << 20)\n"
        "f = (lambda t: t.relu().clone()) if os.environ.get('COPY') else (lambda t: t.relu())",
        variants=["out", "copy env.COPY=1"],
        metrics="rss",
        min_generations=4,  # peak RSS told apart: the rule rests on its verdict
        sample_target_ms=1,
        seed=1,
    )
    result = api.run(experiment, store_path=None).raise_on_failure()
    by_event = {c.event: c for c in result.comparisons}
    assert by_event[MAXRSS_KB].verdict is Verdict.SLOWER  # the copy's 16 MB
    peak = by_event[PEAK_ALLOC_BYTES]
    assert peak.variant_value < 4096  # Python objects only, not the tensors' 16 MB
    assert peak.verdict is Verdict.INCONCLUSIVE
    assert [n for n in result.notes if "is not the memory change" in n.message]
