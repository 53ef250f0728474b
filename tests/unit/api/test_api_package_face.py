"""The package face gives every function of perflab.api (docs/python-api.md: `import perflab`
and `import perflab.api as perflab` give the same functions), loaded on first use."""

from __future__ import annotations

import perflab
import perflab.api


def test_every_name_of_the_api_is_reachable_from_the_package() -> None:
    missing = [name for name in perflab.api.__all__ if name not in perflab.__all__]
    assert not missing, f"perflab.api names that `import perflab` lacks: {missing}"
    for name in perflab.api.__all__:
        assert getattr(perflab, name) is getattr(perflab.api, name), name


def test_every_name_the_package_lists_loads() -> None:
    for name in perflab.__all__:
        assert getattr(perflab, name) is not None, name
