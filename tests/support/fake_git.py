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
from pathlib import Path

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


# the one tracked file of a FakeCheckouts worktree: it holds the commit it was checked out at
TRACKED = "tracked.txt"


@dataclass
class FakeCheckouts:
    """The git commands perflab's build cache runs (git/cache*.py, git/clone.py), answered on
    real folders (a test's tmp_path), so the cache's decisions are unit-tested without git:

        checkouts = FakeCheckouts(tmp_path / "repo")
        runner = FakeRunner().on_run(r"^git ", checkouts)

    `init --bare` makes a folder with HEAD and objects/; `worktree add` a folder whose `.git`
    names the clone and whose one tracked file, TRACKED, holds the commit; `worktree move` moves
    it. `rev-parse HEAD` answers `heads` (a test moves one to say a build ran `git checkout`),
    `diff --name-only` lists TRACKED when its text is no longer the commit, `ls-files --others`
    lists every other file (the build's outputs). `refs` are the user's repository's
    (for-each-ref, update-ref); the clone has none. Any other command fails the test."""

    repository: Path
    heads: dict[Path, str] = field(default_factory=dict)  # checkout -> its HEAD
    refs: dict[str, str] = field(default_factory=dict)
    asked: list[tuple[str, ...]] = field(default_factory=list)
    checked_out: dict[Path, str] = field(default_factory=dict)  # checkout -> its commit

    def __post_init__(self) -> None:
        (self.repository / ".git" / "objects").mkdir(parents=True, exist_ok=True)

    def __call__(self, spec: LaunchSpec, stdin: str | None) -> Completed:
        args = list(spec.argv[1:])
        self.asked.append(tuple(args))
        cwd = Path(spec.cwd or ".")
        answer = self._answer(args, cwd, stdin or "")
        if answer is None:
            return Completed(spec.argv, 128, "", f"fatal: git {' '.join(args)} failed", 1)
        return Completed(spec.argv, 0, answer, "", 1)

    def added(self) -> int:
        """How many worktrees were checked out."""
        return sum(1 for a in self.asked if a[:2] == ("worktree", "add"))

    def _answer(self, args: list[str], cwd: Path, stdin: str) -> str | None:
        command, rest = args[0], args[1:]
        if command == "rev-parse":
            return self._rev_parse(rest, cwd)
        if command == "init":
            made = Path(rest[-1])
            (made / "objects").mkdir(parents=True)
            (made / "HEAD").write_text("ref: refs/heads/main\n")
            return ""
        if command == "config":
            return ""
        if command == "for-each-ref":
            held = self.refs if cwd == self.repository else {}
            return "".join(f"{value} {name}\n" for name, value in held.items())
        if command == "update-ref":
            return self._update_ref(rest, cwd, stdin)
        if command == "worktree":
            return self._worktree(rest, cwd)
        if command == "diff" and rest[:2] == ["--no-ext-diff", "--name-only"]:
            if cwd not in self.checked_out:
                return None
            moved = (cwd / TRACKED).read_text() != self.checked_out[cwd]
            return f"{TRACKED}\n" if moved else ""
        if command == "ls-files" and rest == ["-z", "--others"]:
            return "".join(f"{name}\0" for name in self._untracked(cwd))
        raise AssertionError(f"FakeCheckouts: git {' '.join(args)} is not scripted")

    def _rev_parse(self, rest: list[str], cwd: Path) -> str | None:
        if rest == ["--git-common-dir"]:
            return ".git\n"
        if rest == ["--show-object-format"]:
            return "sha1\n"
        if rest == ["--verify", "-q", "HEAD"]:
            head = self.heads.get(cwd)
            return head + "\n" if head else None
        raise AssertionError(f"FakeCheckouts: git rev-parse {' '.join(rest)} is not scripted")

    def _update_ref(self, rest: list[str], cwd: Path, stdin: str) -> str:
        if cwd != self.repository:
            return ""  # the clone's refs: not kept
        if rest[0] == "-d":
            self.refs.pop(rest[1], None)
        elif rest[0] != "--no-deref":
            self.refs[rest[0]] = rest[1]
        return ""

    def _worktree(self, rest: list[str], cwd: Path) -> str | None:
        if rest[0] == "add":
            scratch, commit = Path(rest[-2]), rest[-1]
            scratch.mkdir()
            (scratch / ".git").write_text(f"gitdir: {cwd}/worktrees/{scratch.name}\n")
            (scratch / TRACKED).write_text(commit)
            self.heads[scratch] = self.checked_out[scratch] = commit
            return ""
        if rest[0] == "move":
            source, target = Path(rest[1]), Path(rest[2])
            source.rename(target)
            self.heads[target] = self.heads.pop(source)
            self.checked_out[target] = self.checked_out.pop(source)
            return ""
        if rest[:2] == ["remove", "--force"]:
            self.heads.pop(Path(rest[2]), None)
            self.checked_out.pop(Path(rest[2]), None)
            return ""
        return None

    def _untracked(self, checkout: Path) -> list[str]:
        return sorted(
            str(p.relative_to(checkout))
            for p in checkout.rglob("*")
            if p.name not in (".git", TRACKED) and (p.is_file() or p.is_symlink())
        )
