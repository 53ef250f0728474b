"""docs/modules.md lists every module of src/perflab with its docstring's first sentence,
by layer; the list is generated (scripts/architecture.py), so moving or adding a module only
needs the generator run again, and this test says when that was forgotten."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[3]
REGENERATE = "run `.venv/bin/python scripts/architecture.py` to regenerate it"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("architecture", ROOT / "scripts/architecture.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_module_list_is_up_to_date() -> None:
    generator = _generator()
    text = generator.DOC.read_text()
    start, end = text.find(generator.BEGIN), text.find(generator.END)
    assert 0 <= start < end, f"docs/modules.md lost its generated section's markers: {REGENERATE}"
    listed = set(re.findall(r"^- `([^`]+\.py)`:", text[start:end], re.MULTILINE))
    src = ROOT / "src" / "perflab"
    modules = {path.relative_to(src).as_posix() for path in generator.MODULES.values()}
    assert not modules - listed, (
        f"modules missing from docs/modules.md: {sorted(modules - listed)}; {REGENERATE}"
    )
    assert not listed - modules, (
        f"modules listed that no longer exist: {sorted(listed - modules)}; {REGENERATE}"
    )
    assert generator.with_section(text) == text, (
        f"a module's docstring or layer changed: {REGENERATE}"
    )


def test_a_summary_is_the_docstrings_first_sentence(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('"""Is it intact? Read-only.\n\nMore."""\n')
    assert _generator().summary(module) == "Is it intact?"
    module.write_text('"""Parse `perf script` output\ninto samples. Pure."""\n')
    assert _generator().summary(module) == "Parse `perf script` output into samples."
    module.write_text("x = 1\n")
    assert _generator().summary(module) == "*(no docstring)*"
