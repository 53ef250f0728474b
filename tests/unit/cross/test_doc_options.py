"""Every `--option` the docs give perflab exists: README.md and docs/ may name an option as
perflab's only if the parser of some perflab command (or of the `perflab 'CMD A' 'CMD B'`
shorthand) has it, so a misremembered option fails here, not in a reader's shell.

An option is perflab's when it follows `perflab` on a command line (a code block's line, or a
backtick span in prose), or when it opens a backtick span in prose (`--band 0.02`). Other
tools' options are told apart by context: a quoted argument on perflab's command line is the
measured program's (`--cmd "./bench --n 1000"`), a command line that does not start with
perflab is another program's, a prose line that names another tool (git, perf, hyperfine, one of
perflab's bench/ scripts ...), or whose neighbour does, is about that tool, and `--benchmark_*`
flags are Google Benchmark's. What context cannot tell is in ELSEWHERE, each with its reason."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from perflab.cli.options import build_parser, option_names
from perflab.cli.shorthand import shorthand_parser

ROOT = Path(__file__).resolve().parents[3]
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")))

_FENCE = re.compile(r"^\s*```")
_SPAN = re.compile(r"`([^`\n]+)`")
_OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9_-]*")
_QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'")
# `perflab`, `.venv/bin/perflab` or `python -m perflab` as the command (first on the line, after
# a prompt, variables or a pipe), then its arguments up to the command's end (`|`, `&&`, `;`, `#`)
_PERFLAB_COMMAND = re.compile(
    r"(?:^|[;&|(]|\$ )\s*(?:\w+=\S*\s+)*(?:[\w./-]*python3?\s+-m\s+|[\w./-]*/)?perflab\s+"
    r"([^|;&#]*)"
)
# a prose line naming one of these (or the line before or after it) is about that tool's options
_OTHER_TOOLS = re.compile(
    r"\b(?:hyperfine|pyperf|asv|pytest|google\s+benchmark|git|perf|valgrind|callgrind|vgdb"
    r"|llvm-symbolizer|addr2line|chromium|curl|gh|ray|setup\.sh)\b|\bbench/",
    re.IGNORECASE,
)
# Google Benchmark's flags all start so (`--benchmark_filter`); perflab's never have a `_`
_GBENCH_FLAG = "--benchmark_"

# Options a doc names that context cannot attribute, each with whose it is. The test fails when
# an entry is no longer found, so the list can only shrink.
ELSEWHERE: dict[tuple[str, str], str] = {}


def _lines(text: str) -> Iterator[tuple[int, str, bool]]:
    """(line number, line, inside a code block), a code block's continued lines (`\\`) joined."""
    in_fence = False
    held, held_number = "", 0
    for number, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if not in_fence:
            yield number, line, False
            continue
        if line.rstrip().endswith("\\"):
            held, held_number = held + line.rstrip()[:-1] + " ", held_number or number
            continue
        yield held_number or number, held + line, True
        held, held_number = "", 0


def _on_command_lines(text: str) -> list[str]:
    """The options after `perflab` on the command lines in `text`, quoted arguments left out."""
    unquoted = _QUOTED.sub(" ", text)
    return [o for args in _PERFLAB_COMMAND.findall(unquoted) for o in _OPTION.findall(args)]


def named_options(text: str) -> Iterator[tuple[int, str]]:
    """(line number, option) for each option a document gives perflab."""
    prose = {number: line for number, line, in_code in _lines(text) if not in_code}
    for number, line, in_code in _lines(text):
        if in_code:
            yield from ((number, option) for option in _on_command_lines(line))
            continue
        around = " ".join(prose.get(n, "") for n in (number - 1, number, number + 1))
        about_another_tool = _OTHER_TOOLS.search(around) is not None
        for span in _SPAN.findall(line):
            yield from ((number, option) for option in _on_command_lines(span))
            opening = _OPTION.match(span)
            if opening and not about_another_tool and not opening.group().startswith(_GBENCH_FLAG):
                yield number, opening.group()


def _unknown() -> dict[tuple[str, str], list[int]]:
    known = option_names(build_parser()) | option_names(shorthand_parser())
    found: dict[tuple[str, str], list[int]] = {}
    for doc in DOCS:
        name = doc.relative_to(ROOT).as_posix()
        for number, option in named_options(doc.read_text()):
            if option not in known:
                found.setdefault((name, option), []).append(number)
    return found


def test_every_option_the_docs_give_perflab_exists() -> None:
    named = {option for doc in DOCS for _, option in named_options(doc.read_text())}
    assert {"--band", "--budget", "--cmd", "--gbench", "--samples"} <= named, "the scan is blind"
    unknown = _unknown()
    wrong = [
        f"{doc}:{lines[0]}: {option}"
        for (doc, option), lines in unknown.items()
        if (doc, option) not in ELSEWHERE
    ]
    assert not wrong, "options no perflab command has:\n" + "\n".join(sorted(wrong))


def test_every_exception_is_still_needed() -> None:
    stale = sorted(set(ELSEWHERE) - set(_unknown()))
    assert not stale, f"ELSEWHERE names options the docs no longer give perflab: {stale}"


def test_options_are_attributed_by_context() -> None:
    text = "\n".join(
        [
            'Use `--band 0.02`, or `perflab run --cmd "./bench --n 3" --budget 5`.',
            "",
            "git's `--unshallow` and `perf record --call-graph dwarf` are not perflab's.",
            "",
            "A binary's own `--benchmark_min_time=0.05` is not either.",
            "```",
            "$ perflab run --stmt 'x' \\",
            "    --variant A | grep --count x",
            "hyperfine --warmup 3 'sleep 0.1'",
            "```",
        ]
    )
    assert list(named_options(text)) == [
        (1, "--band"),
        (1, "--cmd"),
        (1, "--budget"),
        (7, "--stmt"),
        (7, "--variant"),
    ]
