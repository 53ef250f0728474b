"""One rule for a lens's name: it is spelled once, as `<NAME> = Metric("<name>")` in
`lenses/<lens>/metric.py`, which the lens's descriptor and modules import, so a name is changed in
one place and a lens never waits on its own package to learn it. `Metric.TIME` ... in
`records/kinds.py` are the public spelling for code outside the lenses (docs/python-api.md)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from perflab.lenses.registry import DESCRIPTORS
from perflab.records.kinds import Metric

LENSES = Path(__file__).resolve().parents[3] / "src" / "perflab" / "lenses"


@pytest.mark.parametrize("metric", [d.metric for d in DESCRIPTORS], ids=str)
def test_every_lens_names_itself_in_its_metric_module(metric: Metric) -> None:
    module = importlib.import_module(f"perflab.lenses.{metric}.metric")
    package = importlib.import_module(f"perflab.lenses.{metric}")
    constant = str(metric).upper()
    assert getattr(module, constant) is metric
    assert getattr(package, constant) is metric


def test_every_public_spelling_is_a_lens_name() -> None:
    spelled = {name: value for name, value in vars(Metric).items() if isinstance(value, Metric)}
    lenses = {d.metric for d in DESCRIPTORS}
    assert spelled
    assert all(value in lenses and name == str(value).upper() for name, value in spelled.items())


@pytest.mark.parametrize("metric", [d.metric for d in DESCRIPTORS], ids=str)
def test_no_lens_module_spells_its_own_name_again(metric: Metric) -> None:
    constant = str(metric).upper()
    again = re.compile(rf"Metric\.{constant}\b|Metric\(\"{metric}\"\)")
    spelling = [
        path.name
        for path in sorted((LENSES / str(metric)).glob("*.py"))
        if path.name != "metric.py" and again.search(path.read_text())
    ]
    assert not spelling
