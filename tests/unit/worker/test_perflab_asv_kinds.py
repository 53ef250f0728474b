"""asv's kinds as the listing helper reads them: each benchmark's kind, a timeraw_ benchmark's
code read by setting it up and calling it, and the size a mem_ benchmark's object holds."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from perflab.worker.perflab_asv import deep_size, listing, raw_code

SUITE = """
class Kinds:
    params = [1, 2]

    def setup(self, n):
        self.n = n

    def time_x(self, n):
        pass

    def timeraw_x(self, n):
        return "print(%d)" % self.n

    def peakmem_x(self, n):
        pass

    def mem_x(self, n):
        return [0] * n

    def track_x(self, n):
        return n
"""


def test_each_kind_is_listed_and_a_timeraw_benchmarks_code_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "bench_kinds_listed.py").write_text(SUITE)
    monkeypatch.setattr(sys, "path", list(sys.path))
    entries = listing(str(tmp_path), r"\(2\)")
    kinds = {e["name"]: (e["kind"], e.get("code")) for e in entries}
    assert kinds == {
        "bench_kinds_listed.Kinds.mem_x(2)": ("mem", None),
        "bench_kinds_listed.Kinds.peakmem_x(2)": ("peakmem", None),
        "bench_kinds_listed.Kinds.time_x(2)": ("time", None),
        "bench_kinds_listed.Kinds.timeraw_x(2)": ("timeraw", "print(2)"),
        "bench_kinds_listed.Kinds.track_x(2)": ("track", None),
    }


def test_an_objects_size_counts_what_it_reaches_once() -> None:
    items = [object()] * 3  # one object, three references
    assert deep_size(items) == sys.getsizeof(items) + sys.getsizeof(items[0])
    assert deep_size([[], []]) == sys.getsizeof([[], []]) + 2 * sys.getsizeof([])
    assert deep_size(int) == 0  # a class is shared, not held


RAW_SUITE = """
def timeraw_block():
    return \"\"\"
        import json
        json.dumps([1])
        \"\"\"


def timeraw_with_setup():
    return "import json", "import xml"
"""


def test_a_timeraw_benchmarks_code_is_dedented_and_its_setup_run_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # asv's reading: an indented block is dedented; a (code, setup) pair runs the setup first
    (tmp_path / "bench_raw_listed.py").write_text(RAW_SUITE)
    monkeypatch.setattr(sys, "path", list(sys.path))
    entries = {e["name"]: e for e in listing(str(tmp_path))}
    block = entries["bench_raw_listed.timeraw_block"]
    assert block["code"] == "\nimport json\njson.dumps([1])\n" and not block["raw_setup"]
    compile(block["code"], "<timeraw>", "exec")
    paired = entries["bench_raw_listed.timeraw_with_setup"]
    assert paired["code"] == "import xml\nimport json" and paired["raw_setup"]


def test_raw_code_reads_asvs_two_forms() -> None:
    assert raw_code("  x = 1\n") == ("x = 1\n", "")
    assert raw_code(("x", "  y")) == ("x", "y")
