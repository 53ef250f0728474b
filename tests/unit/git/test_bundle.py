"""What a node records of the commits the driver bundled for it: the provenance named with the
refs the user gave, and one copy of each driver repository (its pure parts; bundling and
unpacking run git and are tested in tests/integration)."""

from __future__ import annotations

from pathlib import Path

from perflab.git.bundle import REPOSITORIES, named_provenance, node_repository
from perflab.records.model import Variant

HEAD_SHA = "a" * 40
FIX_SHA = "b" * 40
COMMITS = {"HEAD~1": HEAD_SHA, "fix": FIX_SHA}


def test_the_provenance_names_the_refs_the_user_gave_and_keeps_the_commit() -> None:
    variant = Variant("B", git="HEAD~1", apply=("fix", "local.patch"))
    recorded = {
        "commit": HEAD_SHA,
        "ref": HEAD_SHA,
        "changes": [
            {"kind": "commit", "name": FIX_SHA, "source": FIX_SHA},
            {"kind": "patch", "name": "local.patch"},
        ],
    }
    named = named_provenance(recorded, variant, COMMITS)
    assert named["ref"] == "HEAD~1" and named["commit"] == HEAD_SHA
    assert named["changes"] == [
        {"kind": "commit", "name": "fix", "source": FIX_SHA},
        {"kind": "patch", "name": "local.patch"},
    ]
    assert recorded["ref"] == HEAD_SHA  # the node's record is not changed


def test_a_provenance_without_a_named_commit_is_kept_as_recorded() -> None:
    recorded = {"ref": "c" * 40}
    assert named_provenance(recorded, None, COMMITS) == recorded
    assert named_provenance(recorded, Variant("A"), COMMITS) == recorded
    # a ref the driver did not pin keeps its recorded value
    assert named_provenance(recorded, Variant("B", git="main"), COMMITS) == recorded


def test_each_driver_repository_has_one_copy_on_the_node() -> None:
    root = Path("/cache")
    first = node_repository(root, "/home/me/project")
    assert first == node_repository(root, "/home/me/project")
    assert first.parent == root / REPOSITORIES and first.suffix == ".git"
    assert node_repository(root, "/home/me/other") != first
