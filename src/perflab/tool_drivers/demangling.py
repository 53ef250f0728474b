"""Mangled C++ symbol names made readable: c++filt through the process seam (several at once
for a large library), or the names as they are where c++filt is missing."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Protocol

from perflab.machine.parallel import run_threads
from perflab.machine.proc import LaunchSpec, ProcessRunner
from perflab.tool_drivers.debuginfo import tool_identity


class Demangler(Protocol):
    """Turns mangled symbol names into readable ones, many at a time."""

    def demangle(self, names: Sequence[str]) -> dict[str, str]:
        """Demangled form of each name (names that are not mangled map to themselves)."""
        ...


class IdentityDemangler:
    """A Demangler that leaves every name as it is (where no c++filt is wanted)."""

    cache_tag = "identity"  # what the analysis cache keys demangled names by

    def demangle(self, names: Sequence[str]) -> dict[str, str]:
        return {name: name for name in names}


PARALLEL_DEMANGLE_NAMES = 20000  # below this, one c++filt is quicker than starting several


class CxxFiltDemangler:
    """c++filt through the process seam, all names in one batch (one process per object file)."""

    def __init__(self, runner: ProcessRunner, tool: str = "c++filt", *, jobs: int = 1) -> None:
        """`jobs`: how many c++filt processes share a large batch (analysis after measuring
        may use every CPU; a large library's names take c++filt seconds)."""
        self.runner = runner
        self.tool = tool
        self.jobs = max(1, jobs)

    @property
    def cache_tag(self) -> str:
        """The demangler's identity for the analysis cache: c++filt's own build-id."""
        return f"c++filt:{tool_identity(self.runner.which(self.tool) or self.tool) or self.tool}"

    def demangle(self, names: Sequence[str]) -> dict[str, str]:
        out = {name: name for name in names}
        mangled = [name for name in names if name.startswith("_Z")]
        if not mangled:
            return out
        jobs = self.jobs if len(mangled) >= PARALLEL_DEMANGLE_NAMES else 1
        size = -(-len(mangled) // jobs)
        chunks = [mangled[start : start + size] for start in range(0, len(mangled), size)]
        answers = run_threads(
            [functools.partial(self._demangle, chunk) for chunk in chunks], parallel=True
        )
        for chunk, answer in zip(chunks, answers, strict=True):
            if answer is not None:
                out.update(zip(chunk, answer, strict=True))
        return out

    def _demangle(self, mangled: Sequence[str]) -> list[str] | None:
        done = self.runner.run(LaunchSpec(argv=(self.tool,)), stdin_text="\n".join(mangled) + "\n")
        lines = done.stdout.splitlines()
        # c++filt answers line for line; anything else means it failed and names stay mangled
        return lines if done.ok and len(lines) == len(mangled) else None


def default_demangler(runner: ProcessRunner, *, jobs: int = 1) -> Demangler:
    return CxxFiltDemangler(runner, jobs=jobs) if runner.which("c++filt") else IdentityDemangler()
