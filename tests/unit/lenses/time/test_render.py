"""The time lens's caption, in correct words."""

from __future__ import annotations

import random
from dataclasses import replace

from perflab.lenses.time.analyse import TimeDetails
from tests.support.time_comparisons import time_comparison, time_samples


def test_the_caption_names_batches_in_the_plural() -> None:
    from perflab.lenses.time.render import caption

    comparison, _ = time_comparison(time_samples(random.Random(6), preempted=(0.0, 0.0)))
    assert isinstance(comparison.details, TimeDetails)
    batched = replace(comparison, details=replace(comparison.details, group_name="batch"))
    text = caption([batched], 0.95)
    assert "the batches' medians" in text and "batchs" not in text
