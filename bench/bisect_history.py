"""Find a planted regression in a 64-commit history: how many commits `perflab bisect`
measures (a binary search should need about log2(64) = 6 steps after confirming BAD, not 64)
and how long it takes.

Makes a repository whose first-parent line after the tag `good` holds 64 commits: pull
requests merged with --no-ff every fourth commit (each merging two commits of its branch),
plain commits between, one commit whose build fails, and one merge (`--culprit`, default the
41st) whose branch adds a second loop to a small C program (about 1.9x the instructions). Then
runs `perflab bisect good main --threshold 2%` (the instructions lens) from the command line
with an empty build cache, and checks the culprit it names: the merge on the first-parent
line, and inside it the branch's commit that adds the loop.

Usage: .venv/bin/python bench/bisect_history.py [--culprit 41] [--broken 30] [--out FILE]
Writes a JSON file (the bisection's JSON and the machine) and prints a Markdown summary.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine_facts import machine

ROOT = Path(__file__).resolve().parents[1]
COMMITS = 64
BUILD = "test ! -e broken && cc -O1 -o prog prog.c"
PROG_C = """#include <stdio.h>
#include "work.h"
int main(void) {
    volatile unsigned s = 0;
    for (int i = 0; i < N; i++) s += (unsigned)i * 7u;
    for (int i = 0; i < EXTRA; i++) s ^= (unsigned)i;
    printf("%u\\n", s);
    return 0;
}
"""


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def write_commit(repo: Path, message: str, files: dict[str, str | None]) -> None:
    for name, text in files.items():
        if text is None:
            (repo / name).unlink()
        else:
            (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def make_history(repo: Path, *, culprit: int, broken: int) -> list[str]:
    """64 first-parent commits after `good`; returns their subjects, oldest first."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    write_commit(
        repo,
        "a program",
        {"prog.c": PROG_C, "work.h": "#define N 200000\n#define EXTRA 0\n", ".gitignore": "prog\n"},
    )
    git(repo, "tag", "good")
    subjects = []
    extra = 0
    for number in range(1, COMMITS + 1):
        if number % 4 == 0 or number == culprit:
            branch = f"pr/{number}"
            git(repo, "checkout", "-q", "-b", branch)
            if number == culprit:
                extra = 200000
            write_commit(repo, f"pr {number}: part 1", {f"doc{number}.txt": "part 1\n"})
            write_commit(
                repo,
                f"pr {number}: part 2",
                {"work.h": f"/* {number} */\n#define N 200000\n#define EXTRA {extra}\n"},
            )
            git(repo, "checkout", "-q", "main")
            subject = f"Merge pull request #{number} from {branch}"
            git(repo, "merge", "-q", "--no-ff", "-m", subject, branch)
        elif number == broken:
            subject = "break the build"
            write_commit(repo, subject, {"broken": "yes\n"})
        elif number == broken + 1:
            subject = "fix the build"
            write_commit(repo, subject, {"broken": None})
        else:
            subject = f"commit {number}"
            write_commit(repo, subject, {"notes.txt": f"{number}\n"})
        subjects.append(subject)
    line = git(repo, "rev-list", "--first-parent", "--count", "good..main")
    assert int(line) == COMMITS, line
    return subjects


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--culprit", type=int, default=41, help="which commit (1-64) regresses")
    parser.add_argument("--broken", type=int, default=30, help="which commit fails to build")
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/bisect_history.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="perflab-bisect-") as folder:
        repo = Path(folder) / "repo"
        subjects = make_history(repo, culprit=args.culprit, broken=args.broken)
        command = [
            sys.executable, "-m", "perflab.cli.main", "bisect", "good", "main",
            "--threshold", "2%", "--cmd", "./prog", "--build", BUILD,
            "--cache-dir", str(Path(folder) / "cache"), "--store", str(Path(folder) / "p.db"),
            "--json", str(Path(folder) / "bisect.json"),
        ]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        started = time.monotonic()
        done = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True)
        seconds = time.monotonic() - started
        if done.returncode != 0:
            sys.exit(f"perflab bisect exited with {done.returncode}:\n{done.stderr}")
        found = json.loads((Path(folder) / "bisect.json").read_text())
    expected = subjects[args.culprit - 1]
    outer = found.get("first_parent_culprit", found["culprit"])
    correct = outer is not None and outer["subject"] == expected
    if expected.startswith("Merge pull request"):  # and inside it, the commit that regressed
        inner = found["culprit"]
        correct = correct and inner is not None and inner["subject"].endswith(": part 2")
    report = {
        "machine": machine(),
        "commits_in_line": COMMITS,
        "planted": {"culprit": args.culprit, "subject": expected, "broken": args.broken},
        "found": outer,
        "found_inside": found["culprit"] if found.get("merges") else None,
        "correct": correct,
        # on the first-parent line; the steps inside a merge are `steps_inside`
        "steps": sum(not s.get("inside") for s in found["steps"]),
        "steps_inside": sum(bool(s.get("inside")) for s in found["steps"]),
        "measured_commits": found["measured_commits"],
        "skipped": [s["subject"] for s in found["steps"] if s["state"] == "skipped"],
        "wall_seconds": round(seconds, 1),
        "bisect": found,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(
        f"| commits in the line | planted culprit | found | steps | commits measured | "
        f"skipped | wall time |\n|---:|---|---|---:|---:|---|---:|\n"
        f"| {COMMITS} | #{args.culprit} {expected} | "
        f"{'yes' if correct else 'NO: ' + str(found['culprit'])} | {report['steps']} "
        f"(+{report['steps_inside']} inside) | "
        f"{report['measured_commits']} | {', '.join(report['skipped']) or '-'} | "
        f"{seconds:.0f} s |"
    )
    print(f"machine: {report['machine']['cpu']}, load {report['machine']['load_average']}")


if __name__ == "__main__":
    main()
