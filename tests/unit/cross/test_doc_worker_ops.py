"""docs/worker-protocol.md's table of the lenses' own ops lists every module that serves ops
(`OPS = {...}`) with exactly the ops it registers."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "worker-protocol.md"
SRC = ROOT / "src" / "perflab"
ROW = re.compile(r"^\| `(?P<module>[\w/]+\.py)` \| (?P<ops>[^|]+) \|", re.M)


def _registered(path: Path) -> set[str]:
    """The keys of the module's top-level `OPS` dict."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "OPS" for t in node.targets
        ):
            assert isinstance(node.value, ast.Dict), f"{path}: OPS is not a dict literal"
            return {k.value for k in node.value.keys if isinstance(k, ast.Constant)}
    return set()


def _documented() -> dict[str, set[str]]:
    section = PAGE.read_text().split("## A lens's own ops", 1)[1].split("\n## ", 1)[0]
    return {
        row["module"]: set(re.findall(r"`(\w+)`", re.sub(r"\([^)]*\)", "", row["ops"])))
        for row in ROW.finditer(section)
    }


def test_the_table_lists_each_ops_module_with_the_ops_it_registers() -> None:
    serving = {
        str(path.relative_to(SRC)): ops
        for path in sorted(SRC.rglob("*.py"))
        if (ops := _registered(path))
    }
    assert serving, "no module defines OPS: the test no longer finds them"
    assert _documented() == serving
