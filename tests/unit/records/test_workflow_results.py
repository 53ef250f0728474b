"""Where a check's base came from, said truthfully."""

from __future__ import annotations

from perflab.records.workflow_results import base_words


def test_where_the_base_came_from_is_said_truthfully() -> None:
    assert base_words("--base") == "given with --base"
    assert base_words("CI_MERGE_REQUEST_TARGET_BRANCH_NAME") == (
        "from CI_MERGE_REQUEST_TARGET_BRANCH_NAME"
    )
    assert base_words("the default").startswith("the default: no --base, and neither")
