"""The instructions lens's options (lenses/instructions/options.py): its layers as given, in
order, each a regular expression checked before anything runs."""

from __future__ import annotations

import pytest

from perflab.api import make_experiment
from perflab.lenses.instructions.options import OPTIONS, layers_of
from perflab.lenses.shared_options import CACHE_SIM, REGION
from perflab.records.errors import ConfigError
from perflab.records.settings import Settings


def test_the_layers_are_read_in_the_order_given() -> None:
    settings = Settings().with_options(layers=[("python", "^_Py"), ("numpy", "numpy")])
    assert layers_of(settings) == (("python", "^_Py"), ("numpy", "numpy"))
    assert layers_of(Settings()) == ()


def test_a_layer_that_is_not_a_regular_expression_is_refused_by_name() -> None:
    with pytest.raises(ConfigError, match="layer 'bad': '\\(' is not a regular expression"):
        make_experiment(
            cmd="true", variants=["A", "B"], metrics="instructions", layers=[("bad", "(")]
        )


def test_the_region_and_the_cache_simulation_are_the_shared_options() -> None:
    assert OPTIONS[:2] == (REGION, CACHE_SIM) and [o.name for o in OPTIONS] == [
        "region",
        "cache_sim",
        "layers",
    ]
