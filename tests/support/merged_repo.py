"""A repository with merged pull requests, made on the spot: a tiny C program whose instruction
count is known in advance, so the first-parent stack, bisect, check and history tests know
their answers.

First-parent line of main, after the tag `good` (index: subject):
  0: docs: a README                      neutral
  1: Merge pull request #1 from a/tidy   neutral merge (its branch changes comments only)
  2: tidy: a comment                     neutral
  3: break the build                     the build fails here only
  4: fix the build                       neutral (same program as 2)
  5: Merge pull request #2 from b/slow   the culprit: its branch adds a second loop
  6: docs: more README                   neutral
  7: tidy: another comment               neutral (main)
Branches off main, not merged: pr/slower (a third of the work more), pr/docs (a README).
"""

from __future__ import annotations

from pathlib import Path

from tests.support.git_repo import commit, git

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
BUILD = "test ! -e broken && cc -O1 -o prog prog.c"
CULPRIT_SUBJECT = "Merge pull request #2 from b/slow"
NEUTRAL_MERGE_SUBJECT = "Merge pull request #1 from a/tidy"


def merge(repo: Path, branch: str, message: str) -> str:
    git(repo, "merge", "-q", "--no-ff", "-m", message, branch)
    return git(repo, "rev-parse", "HEAD")


def make_merged_repo(repo: Path) -> Path:
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    commit(
        repo,
        "a program",
        {
            "prog.c": PROG_C,
            "work.h": "#define N 200000\n#define EXTRA 0\n",
            ".gitignore": "prog\n",
        },
    )
    git(repo, "tag", "good")
    commit(repo, "docs: a README", {"README": "a program\n"})
    git(repo, "checkout", "-q", "-b", "a/tidy")
    commit(repo, "a comment", {"prog.c": "/* the work */\n" + PROG_C})
    commit(repo, "another comment", {"prog.c": "/* the work */\n/* more */\n" + PROG_C})
    git(repo, "checkout", "-q", "main")
    merge(repo, "a/tidy", NEUTRAL_MERGE_SUBJECT)
    commit(repo, "tidy: a comment", {"work.h": "/* sizes */\n#define N 200000\n#define EXTRA 0\n"})
    commit(repo, "break the build", {"broken": "yes\n"})
    commit(repo, "fix the build", {"broken": None})
    git(repo, "checkout", "-q", "-b", "b/slow")
    commit(
        repo, "a second loop", {"work.h": "/* sizes */\n#define N 200000\n#define EXTRA 200000\n"}
    )
    commit(repo, "docs: the second loop", {"NOTES": "the second loop\n"})
    git(repo, "checkout", "-q", "main")
    merge(repo, "b/slow", CULPRIT_SUBJECT)
    commit(repo, "docs: more README", {"README": "a program, documented\n"})
    commit(
        repo, "tidy: another comment", {"prog.c": "/* the work */\n/* more */\n/* x */\n" + PROG_C}
    )
    # two pull requests, not merged: one makes the program slower, one changes only docs
    git(repo, "checkout", "-q", "-b", "pr/slower")
    commit(repo, "more work", {"work.h": "/* sizes */\n#define N 200000\n#define EXTRA 400000\n"})
    git(repo, "checkout", "-q", "-b", "pr/docs", "main")
    commit(repo, "docs: say more", {"README": "a program, documented at length\n"})
    git(repo, "checkout", "-q", "main")
    return repo


def first_parent_line(repo: Path) -> list[str]:
    """The commits after `good` along main's first-parent line, oldest first."""
    return git(repo, "rev-list", "--reverse", "--first-parent", "good..main").split()
