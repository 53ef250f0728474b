"""The torch lens: the ops torch.profiler sees per variant."""

from perflab.lenses.descriptor import (
    Explanation,
    LensDescriptor,
    Planning,
    Probe,
    ProbeFacts,
    WorkerNeeds,
)
from perflab.lenses.torch.cost import torch_cost
from perflab.lenses.torch.metric import TORCH as TORCH


def _probe(facts: ProbeFacts) -> Probe:
    if facts.has_module("torch"):
        return Probe(True, "torch.profiler inside each variant (torch found for perflab's python)")
    return Probe(
        True,
        "torch.profiler inside each variant; perflab's own python has no torch",
        "variants need torch in their interpreter (python=)",
    )


DESCRIPTOR = LensDescriptor(
    metric=TORCH,
    summary="the ops torch.profiler sees, per variant",
    lens="perflab.lenses.torch.measure:TorchLens",
    probe=_probe,
    render="perflab.lenses.torch.render:section",
    worker=WorkerNeeds(
        ops=("setup", "check", "calibrate", "torch_profile"),
        handlers="perflab.lenses.torch.worker_ops",
    ),
    planning=Planning(cost=torch_cost),
    explanation=Explanation(
        beside_time="the torch lens adds up the ops' own (self) CPU time under torch.profiler, "
        "whose own cost per op (a few µs) can exceed a small op's work; the time lens times "
        "the whole statement (Python, argument parsing, dispatch) without a profiler, so work "
        "moved out of the op, into dispatch or Python, shrinks one and not the other",
    ),
)
