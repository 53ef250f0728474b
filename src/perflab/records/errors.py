"""Errors as data: what went wrong, where, and how to fix it.

Every error perflab raises on purpose is a :class:`PerflabError`. The CLI renders it once, at the
edge, and exits non-zero; library users can read its fields.
"""

from __future__ import annotations

from collections.abc import Sequence


class PerflabError(Exception):
    """A failure with context (which variant, which benchmark) and a hint on how to fix it."""

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        variant: str | None = None,
        benchmark: str | None = None,
        detail: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.variant = variant
        self.benchmark = benchmark
        self.detail = detail

    def where(self) -> str:
        parts = []
        if self.benchmark is not None:
            parts.append(f"benchmark {self.benchmark!r}")
        if self.variant is not None:
            parts.append(f"variant {self.variant!r}")
        return ", ".join(parts)

    def __str__(self) -> str:
        where = self.where()
        text = f"{where}: {self.message}" if where else self.message
        if self.detail:
            text += "\n" + self.detail.rstrip()
        if self.hint:
            text += f"\nhint: {self.hint}"
        return text


class ConfigError(PerflabError):
    """The experiment as written cannot be run: a bad variant spec, option or experiment file."""


class ToolUnavailableError(PerflabError):
    """A lens needs a tool (perf, valgrind, objdump ...) that is missing or not permitted."""


class BenchmarkFailedError(PerflabError):
    """The code being measured failed: setup or statement raised, a command exited non-zero,
    crashed or timed out, or a build step failed."""

    exit_code = 3


class VariantsFailed(BenchmarkFailedError):
    """Some variants failed while a lens measured the others to the end: each failure names
    its variant, and what the others measured is kept (a crash hides nothing else)."""

    def __init__(self, failures: Sequence[BenchmarkFailedError]) -> None:
        first = failures[0]
        super().__init__(
            "; ".join(f"{f.variant}: {f.message}" for f in failures),
            hint=first.hint,
            benchmark=first.benchmark,
            detail=first.detail,
        )
        self.failures = tuple(failures)


class StoreError(PerflabError):
    """The SQLite store cannot be read or written, or a run id does not exist."""


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM while a run was measuring: what was measured is kept as run `run_id`.
    A KeyboardInterrupt still, so callers that catch interrupts keep working."""

    def __init__(self, run_id: int) -> None:
        super().__init__(f"interrupted; what was measured is kept as run {run_id}")
        self.run_id = run_id


class StoreDamagedError(StoreError):
    """The store's file is an SQLite database with damaged pages (corrupt or truncated)."""


class StoreLostError(StoreError):
    """The store's file was removed or replaced while a run was being written into it."""


class RetiredSettingWarning(FutureWarning):
    """A setting that no longer does anything was given: accepted, so that older files,
    command lines and calls keep working, and said so that they can drop it."""
