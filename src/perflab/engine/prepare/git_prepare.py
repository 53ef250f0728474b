"""Planned variants -> variants ready to measure: git= refs checked out (with their changes
applied) and built in cached worktrees, build= steps run; with the provenance of each."""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from perflab.git.cache import BuildCache
from perflab.git.cache_entry import CacheEntry, Change, default_cache_dir
from perflab.git.repo import (
    GitError,
    ResolvedRef,
    changed_paths,
    commit_patch,
    dirty_summary,
    find_repository,
    resolve_ref,
)
from perflab.machine.builds import run_build
from perflab.machine.proc import ProcessRunner
from perflab.measure.worker_client import check_variant_paths, variant_environment
from perflab.records.errors import BenchmarkFailedError, ConfigError, PerflabError
from perflab.records.kinds import BenchmarkKind
from perflab.records.model import Benchmark, Note, Severity, Variant

# the patch `perflab check` makes of the working tree's changes: a variant applying it
# measures them, so the warning that git=HEAD leaves them out does not apply to it
WORKING_TREE_PATCH = "working-tree.patch"


def measures_working_tree(variants: Sequence[Variant]) -> bool:
    """A variant applies the working tree's changes (`perflab check`'s head): the experiment
    measures them on purpose, so a variant at HEAD's commit without them is meant that way."""
    return any(os.path.basename(text) == WORKING_TREE_PATCH for v in variants for text in v.apply)


@dataclass(frozen=True)
class PreparedVariant:
    """A variant ready to measure: rewritten to run in its checkout, with where it came from and
    what preparing it noted."""

    variant: Variant  # what the lenses run: no git=, no build=, paths inside the checkout
    provenance: dict[str, Any] = field(default_factory=dict)
    notes: tuple[Note, ...] = ()


class VariantPreparer:
    """Prepares each distinct variant once per run (a ref used by several benchmarks, or by
    several cells, is resolved, checked out and built once; across runs the cache does it)."""

    def __init__(
        self,
        runner: ProcessRunner,
        *,
        repository: str | None,
        cache_dir: str | Path | None = None,
        build_timeout_s: float = 3600.0,
        working_tree_measured: bool = False,
    ) -> None:
        self.runner = runner
        self.repository = repository
        self.cache = BuildCache(
            cache_dir or default_cache_dir(), runner, lock_wait_s=build_timeout_s
        )
        self.build_timeout_s = build_timeout_s
        self._done: dict[str, PreparedVariant | PerflabError] = {}
        self._head: ResolvedRef | None = None
        # no warning about uncommitted changes when a variant measures them (check's head)
        self._dirty_checked = working_tree_measured

    def close(self) -> None:
        """Release the cached checkouts this run used (prune may remove them then)."""
        self.cache.close()

    def prepare(self, variant: Variant, benchmark: Benchmark) -> PreparedVariant:
        key = json.dumps({**asdict(variant), "env": dict(variant.env)}, sort_keys=True)
        key += "\0" + benchmark.kind.value + "\0" + (benchmark.cmd or "")
        if key not in self._done:
            try:
                self._done[key] = (
                    self._prepare_git(variant, benchmark)
                    if variant.git
                    else self._prepare_plain(variant)
                )
            except PerflabError as error:
                self._done[key] = error
        outcome = self._done[key]
        if isinstance(outcome, PerflabError):
            raise outcome
        return outcome

    # ---- plain variants: build= runs in cwd, once

    def _prepare_plain(self, variant: Variant) -> PreparedVariant:
        if not variant.build:
            return PreparedVariant(variant)
        completed = run_build(
            self.runner,
            variant.build,
            env=variant_environment(variant),
            cwd=variant.cwd,
            timeout_s=self.build_timeout_s,
        )
        if not completed.ok:
            output = (completed.stdout + completed.stderr).strip()
            raise BenchmarkFailedError(
                f"the build step {variant.build!r} {completed.describe_failure()}",
                hint="fix the build (its output is above) or the variant's cwd=",
                variant=variant.name,
                detail=output[-4000:] or None,
            )
        notes = (_leftover_note(variant, completed.left),) if completed.left else ()
        return PreparedVariant(variant, {"build": variant.build}, notes)

    # ---- git variants

    def _repository(self) -> str:
        if self.repository is None:
            self.repository = find_repository(self.runner, os.getcwd())
        return self.repository

    def _prepare_git(self, variant: Variant, benchmark: Benchmark) -> PreparedVariant:
        assert variant.git is not None
        repository = self._repository()
        try:
            base = resolve_ref(self.runner, repository, variant.git)
            changes = [self._change(repository, text) for text in variant.apply]
        except GitError as error:
            raise GitError(error.message, hint=error.hint, variant=variant.name) from None
        notes = self._dirty_notes(repository, variant, base)
        entry, cached, built_notes = self._built_checkout(repository, variant, base, changes)
        cwd = str(entry.path / variant.cwd) if variant.cwd else str(entry.path)
        python = variant.python
        if python and os.sep in python and not os.path.isabs(python):
            python = os.path.join(cwd, python)
        ready = Variant(
            name=variant.name, python=python, env=dict(variant.env), cwd=cwd, cmd=variant.cmd
        )
        label = f"{variant.git} ({base.short})" + "".join(f" + {c.name}" for c in changes)
        try:
            check_variant_paths(
                ready, python if benchmark.kind is BenchmarkKind.STATEMENT else None
            )
        except ConfigError as error:
            raise ConfigError(
                f"in the checkout of {label}: {error.message}",
                hint=error.hint,
                variant=variant.name,
            ) from None
        if benchmark.kind is BenchmarkKind.COMMAND:
            self._check_program(ready, benchmark, label, has_build=variant.build is not None)
        provenance = _provenance(variant, base, changes, entry, cached=cached)
        return PreparedVariant(ready, provenance, notes + built_notes)

    def _built_checkout(
        self, repository: str, variant: Variant, base: ResolvedRef, changes: list[Change]
    ) -> tuple[CacheEntry, bool, tuple[Note, ...]]:
        """The variant's checkout, built (each from the cache when it is there); whether it
        came from the cache; notes on a repaired entry and processes the build left."""
        try:
            entry, cached = self.cache.checkout(repository, base, changes, variant.build)
        except GitError as error:
            raise GitError(
                error.message, hint=error.hint, variant=variant.name, detail=error.detail
            ) from None
        notes: tuple[Note, ...] = ()
        repaired = self.cache.repaired.pop(entry.key, None)
        if repaired is not None:
            notes += (Note(severity=Severity.WARNING, message=repaired, variant=variant.name),)
        entry = self.cache.build(
            entry,
            subdirectory=variant.cwd,
            env=variant_environment(variant),
            timeout_s=self.build_timeout_s,
            variant=variant.name,
        )
        left = self.cache.stopped.pop(entry.key, 0)
        if left:
            notes += (_leftover_note(variant, left),)
        return entry, cached, notes

    def _change(self, repository: str, text: str) -> Change:
        if os.path.isfile(text):
            path = Path(text).resolve()
            return Change(name=path.stem, source=str(path), kind="patch", patch=path.read_text())
        if text.endswith((".patch", ".diff")):
            raise GitError(
                f"patch file {text!r} does not exist",
                hint="give an existing patch file (relative to where perflab runs) or a commit",
            )
        commit = resolve_ref(self.runner, repository, text)
        return Change(
            name=text,
            source=commit.commit,
            kind="commit",
            patch=commit_patch(self.runner, repository, commit.commit),
        )

    def _dirty_notes(
        self, repository: str, variant: Variant, base: ResolvedRef
    ) -> tuple[Note, ...]:
        if self._dirty_checked:
            return ()
        if any(os.path.basename(text) == WORKING_TREE_PATCH for text in variant.apply):
            return ()
        if self._head is None:
            self._head = resolve_ref(self.runner, repository, "HEAD")
        if base.commit != self._head.commit:
            return ()
        self._dirty_checked = True
        dirty = dirty_summary(self.runner, repository)
        if dirty is None:
            return ()
        return (uncommitted_note(str(repository), variant, base.short, dirty),)

    def _check_program(
        self, variant: Variant, benchmark: Benchmark, label: str, *, has_build: bool
    ) -> None:
        command = benchmark.command_for(variant)
        try:
            words = shlex.split(command)
        except ValueError:
            return
        if not words or "/" not in words[0] or os.path.isabs(words[0]):
            return
        assert variant.cwd is not None
        if os.path.exists(os.path.join(variant.cwd, words[0])):
            return
        if has_build:
            message = f"{words[0]} does not exist in the checkout of {label} after its build"
            hint = "the build command must produce the benchmark's program"
        else:
            message = (
                f"{words[0]} does not exist in the checkout of {label}, and no build command "
                "was given"
            )
            hint = "give the command that builds it: --build 'make' (or build= in the variant)"
        raise BenchmarkFailedError(message, hint=hint, variant=variant.name)


def _provenance(
    variant: Variant,
    base: ResolvedRef,
    changes: list[Change],
    entry: CacheEntry,
    *,
    cached: bool,
) -> dict[str, Any]:
    """Where a git= variant's code came from, as stored with the run."""
    return {
        "ref": variant.git,
        "commit": base.commit,
        "subject": base.subject,
        "base_tree": base.tree,
        "tree": entry.tree,
        "build": variant.build,
        "changes": [{"name": c.name, "kind": c.kind, "source": c.source} for c in changes],
        "checkout": str(entry.path),
        "cached": cached,
        "build_seconds": entry.build_seconds,
    }


def _leftover_note(variant: Variant, left: int) -> Note:
    return Note(
        severity=Severity.WARNING,
        message=f"the build {variant.build!r} left {left} process(es) running when it ended; "
        "perflab stopped them rather than wait for them",
        hint="a build should end everything it starts (a server or daemon it needs belongs "
        "in the benchmark's set-up)",
        variant=variant.name,
    )


def uncommitted_note(repository: str, variant: Variant, commit: str, status: str) -> Note:
    """The warning for a git= variant at HEAD's commit while the working tree has changes
    (`status`: `git status --porcelain`): it measures the commit as committed, without them."""
    return Note(
        severity=Severity.WARNING,
        message=f"the working tree of {repository} has uncommitted changes; "
        f"git={variant.git} means the commit {commit} as committed, without them "
        f"(changed: {', '.join(changed_paths(status)[:5])})",
        hint="commit the changes (or give them as a patch: git diff > my.patch, then "
        "apply=my.patch) to measure them; perflab never reads or changes your working tree",
        variant=variant.name,
    )
