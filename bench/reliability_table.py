"""The reliability table of docs/reliability.md, from a run of the fault suite.

    .venv/bin/python bench/reliability_table.py [--check]

Runs `pytest tests/faults` (real perflab processes on real stores; ~5 minutes on a 2-vCPU VM)
with PERFLAB_FAULT_REPORT set, so tests/faults/conftest.py records per case the outcome, the
samples kept and the processes left, and rewrites the table between the markers in
docs/reliability.md. With --check it only prints the table. With --report PATH it makes the
table from records a run of the suite already wrote (PERFLAB_FAULT_REPORT=PATH pytest ...).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from machine_facts import cpu_model

from perflab.report.escape import markdown

ROOT = Path(__file__).resolve().parent.parent
DOCUMENT = ROOT / "docs" / "reliability.md"
START, END = "<!-- reliability table: start -->", "<!-- reliability table: end -->"
COMMAND = ".venv/bin/python bench/reliability_table.py"


def run_suite() -> tuple[list[dict[str, Any]], float, int]:
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "faults.json"
        env = {**os.environ, "PERFLAB_FAULT_REPORT": str(report)}
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(ROOT / "src"), env.get("PYTHONPATH")) if p
        )
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/faults"],
            cwd=ROOT,
            env=env,
        )
        elapsed_s = time.monotonic() - started
        records = json.loads(report.read_text()) if report.exists() else []
    return records, elapsed_s, done.returncode


def _cell(text: str) -> str:
    # the cases quote hostile names (</details>, <script>, ESC): escaped as perflab's reports do
    return markdown(text)


def _number(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def table(records: list[dict[str, Any]], elapsed_s: float | None) -> str:
    by_file: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        by_file.setdefault(record["test"].split("::")[0], []).append(record)
    passed = sum(r["outcome"] == "passed" for r in records)
    skipped = sum(r["outcome"] == "skipped" for r in records)
    left = sum(r["processes_left"] or 0 for r in records)
    lines = [
        f"{len(records)} cases, {passed} passed, {len(records) - passed - skipped} failed, "
        f"{skipped} skipped; {left} process(es) left in total (target 0). Generated "
        f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC on {cpu_model()}, {os.cpu_count()} "
        f"vCPUs{'' if elapsed_s is None else f', in {elapsed_s:.0f} s'}, by `{COMMAND}`.",
        "",
    ]
    for file, rows in by_file.items():
        lines += [
            f"**{file}**",
            "",
            "| case | outcome | samples kept | processes left |",
            "|---|---|---:|---:|",
        ]
        for r in rows:
            lines.append(
                f"| {_cell(r['case'])} | {r['outcome']} | {_number(r['samples_kept'])} "
                f"| {_number(r['processes_left'])} |"
            )
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="print the table, change nothing")
    parser.add_argument("--report", type=Path, help="records of a run of the suite (JSON)")
    args = parser.parse_args()
    elapsed_s: float | None
    if args.report is not None:
        records, elapsed_s, status = json.loads(args.report.read_text()), None, 0
    else:
        records, elapsed_s, status = run_suite()
    if not records:
        print("the fault suite recorded nothing", file=sys.stderr)
        return status or 1
    text = table(records, elapsed_s)
    if args.check:
        print(text)
        return status
    document = DOCUMENT.read_text()
    head, rest = document.split(START, 1)
    _, tail = rest.split(END, 1)
    DOCUMENT.write_text(f"{head}{START}\n{text}{END}{tail}")
    print(f"wrote {len(records)} cases to {DOCUMENT.relative_to(ROOT)}")
    return status


if __name__ == "__main__":
    sys.exit(main())
