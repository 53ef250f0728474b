"""The old import path of bisect's Direction still imports (perflab.compat)."""

from __future__ import annotations

import pytest

from perflab.records.bisect import Direction


def test_the_old_path_of_direction_still_imports() -> None:
    from perflab.plan.bisect_search import Direction as OldDirection

    assert OldDirection is Direction


def test_a_name_that_never_lived_there_is_an_attribute_error() -> None:
    import perflab.plan.bisect_search as old

    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        _ = old.Nothing
