"""A git repository in memory: answers the queries perflab.git.repo asks (rev-parse, show,
log, rev-list, merge-base, status, diff, remote) from a commit graph, so code that reads a
repository's history is unit-tested with `fake_processes.FakeRunner` and starts no git.

    repo = FakeRepository()
    first = repo.commit("first")
    second = repo.commit("second", parents=(first,))
    runner = FakeRunner().on_run(r"^git ", repo)

Commits are named by their subject (their sha is derived from it); `refs` maps branch names to
commits (`HEAD` is the last commit made unless set). Only what perflab asks is answered: any
other git command fails the test.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from perflab.machine.proc import Completed, LaunchSpec


@dataclass(frozen=True)
class FakeCommit:
    sha: str
    subject: str
    tree: str
    parents: tuple[str, ...]


def _sha(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


@dataclass
class FakeRepository:
    path: str = "/repo"
    commits: dict[str, FakeCommit] = field(default_factory=dict)
    refs: dict[str, str] = field(default_factory=dict)
    uncommitted: str = ""  # `git diff HEAD`: the working tree's changes to tracked files
    remotes: tuple[str, ...] = ("origin",)
    asked: list[tuple[str, ...]] = field(default_factory=list)

    def commit(self, subject: str, *, parents: Sequence[str] = (), tree: str | None = None) -> str:
        """A new commit (its sha); HEAD moves to it. `tree`: shared with another commit's
        (the same code, as a revert makes), else its own."""
        sha = _sha("commit " + subject)
        self.commits[sha] = FakeCommit(
            sha, subject, tree or _sha("tree " + subject), tuple(parents)
        )
        self.refs["HEAD"] = sha
        return sha

    def line(self, *subjects: str) -> list[str]:
        """A line of commits, each the parent of the next, after HEAD (when there is one)."""
        shas: list[str] = []
        for subject in subjects:
            parent = self.refs.get("HEAD")
            shas.append(self.commit(subject, parents=(parent,) if parent else ()))
        return shas

    def __call__(self, spec: LaunchSpec, stdin: str | None) -> Completed:
        args = spec.argv[1:]
        self.asked.append(args)
        answer = self._answer(list(args))
        if answer is None:
            return Completed(spec.argv, 1, "", "fatal: not in the fake repository", 1)
        return Completed(spec.argv, 0, answer, "", 1)

    # ---- the queries

    def _answer(self, args: list[str]) -> str | None:
        command, rest = args[0], args[1:]
        if command == "rev-parse":
            return self._rev_parse(rest)
        if command == "show" and rest[:2] == ["-s", "--format=%T%n%s"]:
            found = self.commits.get(rest[2])
            return f"{found.tree}\n{found.subject}\n" if found else None
        if command == "merge-base":
            return self._merge_base(rest)
        if command == "log" and "--first-parent" in rest:
            old, new = self._range(rest[-1])
            line = self._first_parent_line(old, new)
            return "".join(f"{c}\0{self.commits[c].subject}\n" for c in line)
        if command == "rev-list":
            return self._rev_list(rest)
        if command == "status":
            return " M changed.py\n" if self.uncommitted else ""
        if command == "diff" and rest[-1] == "HEAD":
            return self.uncommitted
        if command == "remote":
            return "".join(f"{r}\n" for r in self.remotes)
        raise AssertionError(f"FakeRepository: git {' '.join(args)} is not scripted")

    def _rev_parse(self, rest: list[str]) -> str | None:
        if rest == ["--show-toplevel"]:
            return self.path + "\n"
        if rest in (["--is-bare-repository"], ["--is-shallow-repository"]):
            return "false\n"
        if rest[:2] == ["--verify", "--quiet"]:
            found = self.resolve(rest[2].removesuffix("^{commit}"))
            return found + "\n" if found else None
        if len(rest) == 1 and rest[0].endswith("^"):
            found = self.resolve(rest[0][:-1])
            return self.commits[found].parents[0] + "\n" if found else None
        raise AssertionError(f"FakeRepository: git rev-parse {' '.join(rest)} is not scripted")

    def resolve(self, ref: str) -> str | None:
        """A ref, a sha or a sha's prefix (at least 4 characters), with ~N (N first parents
        back) -> the commit; else None."""
        ref, tilde, back = ref.partition("~")
        found = self._named(ref)
        for _ in range(int(back or 1) if tilde else 0):
            parents = self.commits[found].parents if found else ()
            found = parents[0] if parents else None
        return found

    def _named(self, ref: str) -> str | None:
        if ref in self.refs:
            return self.refs[ref]
        found = [sha for sha in self.commits if len(ref) >= 4 and sha.startswith(ref)]
        return found[0] if len(found) == 1 else None

    def _merge_base(self, rest: list[str]) -> str | None:
        if rest[0] == "--is-ancestor":
            return "" if rest[1] in self.ancestors(rest[2]) else None
        first, second = (self.resolve(r) for r in rest)
        assert first is not None and second is not None
        common = self.ancestors(first) & self.ancestors(second)
        # the best common ancestor: no other common one descends from it
        best = [c for c in common if not any(c in self.ancestors(o) - {o} for o in common)]
        return best[0] + "\n" if best else None

    def _rev_list(self, rest: list[str]) -> str:
        if rest[0] == "--parents":
            commit = self.commits[rest[-1]]
            return " ".join((commit.sha, *commit.parents)) + "\n"
        old, new = self._range(rest[-1])
        if "--first-parent" in rest:
            listed = self._first_parent_line(old, new)
        else:
            listed = [
                c for c in self._topological() if c in self.ancestors(new) - self.ancestors(old)
            ]
        if "--merges" in rest:
            listed = [c for c in listed if len(self.commits[c].parents) > 1]
        if "--reverse" not in rest:
            listed.reverse()
        return "".join(f"{c}\n" for c in listed)

    # ---- the graph

    def ancestors(self, sha: str) -> set[str]:
        """The commit and every commit it descends from."""
        seen: set[str] = set()
        todo = [sha]
        while todo:
            commit = todo.pop()
            if commit not in seen:
                seen.add(commit)
                todo.extend(self.commits[commit].parents)
        return seen

    def _range(self, text: str) -> tuple[str, str]:
        old, _, new = text.partition("..")
        return old, new

    def _first_parent_line(self, old: str, new: str) -> list[str]:
        """The commits after `old` along `new`'s first-parent line, oldest first."""
        excluded = self.ancestors(old)
        line: list[str] = []
        commit: str | None = new
        while commit is not None and commit not in excluded:
            line.append(commit)
            parents = self.commits[commit].parents
            commit = parents[0] if parents else None
        return line[::-1]

    def _topological(self) -> list[str]:
        """Every commit, parents before children (the order they were made in)."""
        return list(self.commits)
