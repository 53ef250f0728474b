"""A bisection's answer (records/bisect.py): the first commit found, inside which merges, or the
candidates left, or why none; the commits it measured; and its JSON."""

from __future__ import annotations

import dataclasses

from perflab.records.bisect import (
    BisectResult,
    BisectStep,
    Commit,
    Direction,
    EvidenceRun,
    EvidenceSource,
    StepOutcome,
    StepState,
)
from perflab.records.kinds import Metric

GOOD, BAD = Commit("a" * 40, "good"), Commit("f" * 40, "bad")
MERGE, CULPRIT, PARENT = (
    Commit("c" * 40, "merge x"),
    Commit("d" * 40, "slow"),
    Commit("e" * 40, "p"),
)


def step(index: int, commit: Commit, state: StepState, *, reused: bool = False) -> BisectStep:
    return BisectStep(index, commit.commit, commit.subject, StepOutcome(state, 1.1, reused=reused))


FOUND = BisectResult(
    good=GOOD,
    bad=BAD,
    metric=Metric.TIME,
    threshold=0.02,
    line=(MERGE, BAD),
    steps=(step(0, MERGE, StepState.BAD), step(0, CULPRIT, StepState.BAD, reused=True)),
    culprit=CULPRIT,
    candidates=(),
    stopped="",
    seconds=12.5,
    evidence_run=4,
    merges=(MERGE,),
    parent=PARENT,
    evidence_runs=(EvidenceRun(4, (Metric.TIME, Metric.INSTRUCTIONS), EvidenceSource.STORE),),
)


def test_the_answer_names_the_commit_and_the_merges_it_is_inside() -> None:
    assert FOUND.answer() == "first bad commit: dddddddddd slow (inside cccccccccc merge x)"
    assert FOUND.first_parent_culprit == MERGE
    faster = dataclasses.replace(FOUND, direction=Direction.FASTER, merges=())
    assert faster.answer() == "first faster commit: dddddddddd slow"
    assert faster.first_parent_culprit == CULPRIT


def test_without_a_culprit_the_candidates_or_why_the_search_stopped() -> None:
    left = dataclasses.replace(FOUND, culprit=None, candidates=(MERGE, CULPRIT))
    assert left.answer() == "the first bad commit is one of: cccccccccc merge x, dddddddddd slow"
    none = dataclasses.replace(FOUND, culprit=None, stopped="BAD is not slower than GOOD")
    assert none.answer() == "no commit found: BAD is not slower than GOOD"


def test_the_commits_measured_are_good_the_steps_and_the_evidences_parent() -> None:
    assert FOUND.measured_commits == 4  # good, the merge, the culprit and its parent
    assert dataclasses.replace(FOUND, evidence_run=None).measured_commits == 3


def test_its_json_counts_what_was_measured_now_and_names_the_evidence() -> None:
    written = FOUND.to_json()
    assert written["culprit"] == {"commit": CULPRIT.commit, "subject": "slow"}
    assert written["first_parent_culprit"]["subject"] == "merge x"
    assert (written["commits_in_line"], written["measured_commits"]) == (2, 4)
    assert written["measured_now"] == 1  # the culprit's step was read from the store
    assert written["evidence_runs"] == [
        {"run_id": 4, "metrics": ["time", "instructions"], "source": "store"}
    ]
    assert written["steps"][1]["reused"] and written["steps"][0]["reason"] is None
    assert written["stopped"] is None and written["disagreement"] is None
