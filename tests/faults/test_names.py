"""Hostile names are harmless: a benchmark name, an environment value or a parameter value can
hold newlines, `</details>`, raw HTML, Markdown syntax, rich markup and terminal escape sequences;
no report lets them change what it says around them, and none emits a control character raw."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from perflab.report.escape import html_prose, html_text, markdown, markdown_prose, terminal, visible
from tests.support.cli_commands import FAST, perflab
from tests.support.tagged_processes import Fault, processes_left

ESC = "\x1b"
FAKE_VERDICT = "### ✅ no regressions"
NAME = (
    f"sum\n</details>\n\n{FAKE_VERDICT}\n<script>alert(1)</script><img src=x onerror=alert(1)>"
    f" {ESC}[31mred{ESC}]0;pwned\x07 [bold]b[/bold] | *x* `y` \u202eevil"
)
ENV_VALUE = f"{ESC}[2J{ESC}]8;;http://evil{ESC}\\link"
HOSTILE = [
    NAME,
    ENV_VALUE,
    "a|b\n|---|",
    "</details><details open><summary>✅",
    "[click](http://evil) ![img](http://evil/x.png)",
    "\r\x08\x07\x00\x7f\x9b31m",
    "$$x$$ ~~s~~ __u__",
]


# ---- the helpers, pure


@pytest.mark.parametrize("text", HOSTILE)
def test_markdown_escaping_keeps_a_name_on_its_line_and_inert(text: str) -> None:
    """markdown(): one line, no raw HTML, no unescaped table pipe, no control character"""
    out = markdown(text)
    assert "\n" not in out and "\r" not in out
    assert "<" not in out and ">" not in out
    assert re.search(r"(?<!\\)\|", out) is None
    assert re.search(r"(?<!\\)[\[\]`*_~$]", out) is None
    assert not re.search(r"[\x00-\x1f\x7f-\x9f]", out)


@pytest.mark.parametrize("text", HOSTILE)
def test_a_name_inside_perflabs_own_sentence_stays_inert(text: str) -> None:
    """markdown_prose()/html_prose() (notes: perflab's `code` as code): a name in the sentence
    cannot open raw HTML or a new line, nor emit a control character"""
    sentence = f"`{text}` and `base` differ only in X={text}: is `X` read?"
    out = markdown_prose(sentence)
    assert "\n" not in out and "\r" not in out
    assert "<" not in out and ">" not in out
    assert not re.search(r"[\x00-\x1f\x7f-\x9f]", out)
    page = html_prose(sentence)
    assert "<" not in page.replace("<code>", "").replace("</code>", "")
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]", page)


@pytest.mark.parametrize("text", HOSTILE)
def test_terminal_and_html_show_control_characters(text: str) -> None:
    """visible()/terminal()/html_text(): control characters shown as escapes, never emitted"""
    for out in (visible(text), terminal(text).plain, html_text(text, keep_newlines=False)):
        assert not re.search(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e]", out)
    assert "<" not in html_text(text) and ESC not in html_text(text)
    if ESC in text:
        assert "\\x1b" in visible(text)


# ---- end to end, through a real run and its stored copy


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    done = perflab(
        "run", "--stmt", "sum(range($n))", "--name", NAME, "--param", "n=10",
        "-v", "A", "-v", f"B env.X={ENV_VALUE}",
        "--json", "out.json", "--markdown", "out.md", "--html", "out.html", *FAST,
        cwd=folder,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (folder / "stdout.txt").write_text(done.stdout)
    return folder


def _no_raw_control(text: str) -> None:
    assert ESC not in text and "\x07" not in text and "\u202e" not in text


def test_markdown_report_cannot_be_injected(hostile_run: Path, fault: Fault) -> None:
    """Markdown: a name with newlines, </details>, a fake '✅ no regressions' heading, <script>
    and <img onerror> stays inside its table cell and note"""
    shown = perflab("show", "--markdown", "-", cwd=hostile_run)
    assert shown.returncode == 0, shown.stderr
    for document in ((hostile_run / "out.md").read_text(), shown.stdout):
        _no_raw_control(document)
        lines = document.splitlines()
        headings = [line for line in lines if line.startswith("#")]
        assert headings[0] == lines[0]
        assert all(re.fullmatch(r"#{3,4} (perflab run \d+ \(\w+\)|time)", h) for h in headings)
        assert FAKE_VERDICT not in lines
        assert document.count("</details>") == document.count("<details>") >= 1
        assert "&lt;/details&gt;" in document
        assert "<script" not in document and "<img" not in document
        header = next(line for line in lines if line.startswith("| benchmark"))
        rows = [line for line in lines if line.startswith("| sum")]
        assert len(rows) == 1
        pipe = r"(?<!\\)\|"
        assert len(re.findall(pipe, rows[0])) == len(re.findall(pipe, header))  # no extra cell
    assert processes_left(fault.tag) == []


def test_terminal_output_shows_escape_sequences_visibly(hostile_run: Path, fault: Fault) -> None:
    """terminal: ESC sequences (colour, window title, hyperlink, clear screen) in a name or an
    environment value are printed as \\x1b, and rich markup in a name is printed as written"""
    for output in (
        (hostile_run / "stdout.txt").read_text(),
        perflab("show", cwd=hostile_run).stdout,
    ):
        _no_raw_control(output)
        assert "\\x1b" in output
        assert "[bold]b[/bold]" in "".join(output.split())
    listed = perflab("list", cwd=hostile_run)  # names shortened to 60 characters there
    assert listed.returncode == 0
    _no_raw_control(listed.stdout)


def test_html_report_escapes_names_and_shows_control_characters(hostile_run: Path) -> None:
    """HTML: <script>/<img onerror> in a name are text, ESC sequences are shown as \\x1b"""
    document = (hostile_run / "out.html").read_text()
    _no_raw_control(document)
    assert "<script>alert" not in document and "<img src=x" not in document
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in document
    assert "\\x1b[31mred" in document


def test_json_keeps_names_exactly(hostile_run: Path) -> None:
    """JSON: names are data, kept exactly as given (the encoder escapes them)"""
    document = json.loads((hostile_run / "out.json").read_text())
    (comparison,) = document["comparisons"]
    assert comparison["benchmark"] == f"{NAME}[n=10]"
    assert "\\u001b" in (hostile_run / "out.json").read_text()


def test_error_messages_show_hostile_names_visibly(tmp_path: Path, fault: Fault) -> None:
    """a failing benchmark with ESC sequences in its name: status 3, the error names it with
    the sequences shown, nothing raw on stderr"""
    done = perflab(
        "run", "--stmt", "1/0", "--name", f"t{ESC}]0;pwned\x07{ESC}[2J", "-v", "A", "-v", "B",
        *FAST, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 3
    _no_raw_control(done.stderr + done.stdout)
    assert "ZeroDivisionError" in done.stderr and "x1b" in done.stderr
    assert processes_left(fault.tag) == []


def test_fail_on_line_shows_names_visibly(tmp_path: Path) -> None:
    """--fail-on: the line naming the matched comparison shows control characters visibly"""
    done = perflab(
        "run", "--stmt", "sum(range(int(os.environ['N'])))", "--setup", "import os",
        "--name", f"n{ESC}[8m", "-v", "A env.N=10", "-v", "B env.N=5000", "-q",
        "--fail-on", "slower", *FAST, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    _no_raw_control(done.stderr)
    if done.returncode == 1:
        assert "n\\x1b[8m" in done.stderr


def test_hostile_names_do_not_break_the_command_line(tmp_path: Path) -> None:
    """a name that looks like an option or holds shell syntax is measured as given"""
    run = perflab(
        "run", "--stmt", "pass", "--name=--json; rm -rf ~ $(reboot)", "-v", "A", "-v", "B",
        "--json", "-", "-q", *FAST, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["comparisons"][0]["benchmark"] == "--json; rm -rf ~ $(reboot)"
