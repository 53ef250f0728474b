"""Every module, file or folder of perflab the docs name exists, so a moved or renamed module
cannot leave README.md and docs/ pointing at nothing. Checked: `src/perflab/...` and
`perflab/<package>/...` anywhere (code blocks too), and inside backticks outside code blocks
a path under src/perflab written from its package (`store/sqlite.py`, `budget/plan`), a path
from the repository's root (`tests/...`, `scripts/...`, `bench/...`) and a dotted module
(`perflab.store.sqlite`). A name after the module (`analyse/run.py:analyse_run`,
`measure/session.loops_per_variant`, `perflab.records.errors.RetiredSettingWarning`, a test
after `::`) must appear in it. A placeholder (`lenses/<lens>/`, `tests/unit/<package>/`,
`lenses/*`) stands for any name: the part before it must exist. docs/architecture.md's layer
table names modules by their bare name after their folder (`plan/` (`schedule`, `designs`)):
each must be a module or package of the folder named last before it in its row. An old module
path that perflab.compat still imports (`GONE_MODULES`) counts as there."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from perflab.compat import GONE_MODULES

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "src" / "perflab"
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")))
# the folders at the repository's root a doc may name a file in
REPOSITORY_FOLDERS = frozenset({"src", "tests", "scripts", "bench"})
# perflab's own packages: a path that starts with one is under src/perflab
PACKAGES = frozenset(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
# `perflab.toml`, `.perflab/perflab.db`: files named after perflab, not modules
FILE_SUFFIXES = frozenset({"toml", "db", "py", "md", "json", "html", "txt", "cfg", "ini"})

_FENCE = re.compile(r"^\s*```")
_SPAN = re.compile(r"`([^`\n]+)`")
_TOKEN = re.compile(r"[A-Za-z0-9_./<>:*-]+")
# written out anywhere, in prose and code blocks too (the `.` before it: `.perflab/perflab.db`)
_ANYWHERE = re.compile(r"(?<![\w./-])(?:src/)?perflab/[A-Za-z0-9_./<>*-]+")


def _named(text: str) -> Iterator[tuple[int, str]]:
    """(line number, name) for each name of perflab's code in a document's text."""
    in_fence = False
    for number, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        for found in _ANYWHERE.findall(line):
            first = found.removeprefix("src/").split("/")[1]
            if found.startswith("src/") or first in PACKAGES or first.startswith("__init__"):
                yield number, found.rstrip(".,:")
        if in_fence:
            continue  # captured output and commands: only the paths above are perflab's
        for span in _SPAN.findall(line):
            for token in _TOKEN.findall(span):
                token = token.rstrip(".,:")
                first = token.split("/")[0]
                if token.startswith("perflab."):
                    yield number, token
                elif "/" in token and first in PACKAGES | REPOSITORY_FOLDERS:
                    yield number, token


def _module(folder: Path, parts: list[str]) -> Path | None:
    """The file of module `parts` under `folder` (a package's `__init__.py`), if there is one."""
    path = folder.joinpath(*parts)
    if parts and path.with_suffix(".py").is_file():
        return path.with_suffix(".py")
    if (path / "__init__.py").is_file():
        return path / "__init__.py"
    return None


def _defines(module: Path, name: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\b", module.read_text()) is not None


def _dotted_problem(name: str) -> str | None:
    parts = name.split(".")
    if parts[-1] in FILE_SUFFIXES or name in GONE_MODULES:
        return None  # a file; an old module path that perflab.compat still answers
    placeholder = next((i for i, part in enumerate(parts) if "<" in part), None)
    if placeholder is not None:
        parts = parts[:placeholder]
    parts[-1] = parts[-1].split(":")[0]
    for end in range(len(parts), 0, -1):
        module = _module(PACKAGE, parts[1:end])
        if module is None:
            continue
        rest = parts[end:]
        if not rest or (len(rest) == 1 and _defines(module, rest[0])):
            return None
        return f"{'.'.join(rest)} is not in {module.relative_to(ROOT)}"
    return "no such module"


def _path_problem(name: str) -> str | None:
    name = name.removeprefix("perflab/") if name.startswith("perflab/") else name
    folder = ROOT if name.split("/")[0] in REPOSITORY_FOLDERS else PACKAGE
    path, _, attribute = name.replace("::", ":").partition(":")
    if "<" in path or "*" in path:
        fixed = re.split(r"[<*]", path)[0]
        return None if (folder / fixed).exists() else f"{fixed} does not exist"
    target = folder / path
    if target.exists():
        named = target / "__init__.py" if target.is_dir() else target
        if attribute and not (named.is_file() and _defines(named, attribute)):
            return f"{attribute} is not in {path}"
        return None
    if path.endswith(("/", ".py")):
        return "does not exist"
    # a module without its .py, perhaps followed by a name in it: `budget/plan`,
    # `measure/session.loops_per_variant`
    head, _, last = path.rpartition("/")
    stem, _, inner = last.partition(".")
    module = _module(folder / head, [stem])
    if module is None:
        return "does not exist"
    for name_in_it in (inner, attribute):
        if name_in_it and not _defines(module, name_in_it):
            return f"{name_in_it} is not in {module.relative_to(ROOT)}"
    return None


_WORD = re.compile(r"\w+")


def layer_table_modules(text: str) -> Iterator[tuple[int, str]]:
    """(line number, path) for each bare module name in the layer table's rows, joined to the
    folder named last before it in its row (perflab's top level before any)."""
    in_table = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("| layer"):
            in_table = True
        elif not line.startswith("|"):
            in_table = False
        if not in_table:
            continue
        folder = ""
        for span in _SPAN.findall(line):
            if span.endswith("/"):
                folder = span
            elif _WORD.fullmatch(span):
                yield number, folder + span


def problem(name: str) -> str | None:
    """Why a name the docs use points at nothing; None when it exists."""
    if name.startswith("perflab."):
        return _dotted_problem(name)
    return _path_problem(name.removeprefix("src/perflab/"))


def stale(text: str) -> list[str]:
    named = [*_named(text), *layer_table_modules(text)]
    return [f"line {n}: {name}: {why}" for n, name in named if (why := problem(name))]


def test_every_module_and_path_the_docs_name_exists() -> None:
    found = [f"{doc.relative_to(ROOT)}, {line}" for doc in DOCS for line in stale(doc.read_text())]
    assert not found, "the docs name what is not there (moved or renamed?):\n" + "\n".join(found)


def test_the_check_finds_what_is_gone_and_accepts_placeholders() -> None:
    text = "\n".join(
        [
            "`store/sqlite.py`, `perflab.store.sqlite`, `analyse/run.py:analyse_run`",
            "`lenses/<lens>/worker_ops.py`, `perflab.lenses.<lens>.render:section`, `lenses/*`",
            "`budget/plan`, `measure/session.loops_per_variant`, `perflab.toml`",
            "`.perflab/perflab.db`, `tests/unit/<package>/`, `perflab run --store x.db`",
            "see src/perflab/records/errors.py and perflab/worker/statement_worker.py",
            "```",
            "`bench/results/gone.json` in captured output",
            "```",
        ]
    )
    assert stale(text) == []
    gone = "\n".join(
        [
            "`store/nothing.py`",
            "`perflab.store.nothing`",
            "`analyse/run.py:no_such_function`",
            "`perflab.records.errors.NoSuchError`",
            "`plan/no_module`",
            "`measure/session.no_such_name`",
            "`lenses/<lens>/`, `nowhere/<x>/`",
            "`tests/unit/nothing/test_x.py`",
            "```",
            "python src/perflab/nothing.py",
            "```",
        ]
    )
    assert [line.split(":")[0] for line in stale(gone)] == [
        f"line {n}" for n in (1, 2, 3, 4, 5, 6, 8, 10)
    ]


def test_the_layer_tables_bare_names_are_modules_of_the_folder_before_them() -> None:
    table = "\n".join(
        [
            "| layer | modules |",
            "| records | `records/` (`model`, `verdicts`); `api`, `nothing` |",
            "| foundation | `plan/` (`schedule`, `config`), `store/` (`sqlite`) |",
            "",
            "| not | `the_table` |",
        ]
    )
    assert list(layer_table_modules(table)) == [
        (2, "records/model"),
        (2, "records/verdicts"),
        (2, "records/api"),
        (2, "records/nothing"),
        (3, "plan/schedule"),
        (3, "plan/config"),
        (3, "store/sqlite"),
    ]
    assert [line.split(":")[1].strip() for line in stale(table)] == [
        "records/verdicts",
        "records/api",
        "records/nothing",
        "plan/config",
    ]
