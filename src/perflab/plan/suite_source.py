"""A suite another tool defines (a Google Benchmark binary, an asv directory, a pytest-benchmark
suite) as the source of an experiment's benchmarks. A source says whose suite, where, and the filter
that selects among its benchmarks; the one suite that make_experiment's keywords (or the command
line's options) give is chosen here, each filter checked to have its suite."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path

from perflab.records.errors import ConfigError


class SuiteKind(enum.StrEnum):
    """Whose suite; in the order of precedence: the first given makes the benchmarks and
    refuses the later ones."""

    GBENCH = "gbench"
    ASV = "asv"
    PYTEST = "pytest"

    @property
    def flag(self) -> str:
        """The command line's option that names the suite."""
        return f"--{self.value}"

    @property
    def filter_flag(self) -> str:
        """The command line's option of the suite's filter."""
        return _FILTER_FLAGS[self]


_FILTER_FLAGS = {SuiteKind.GBENCH: "--filter", SuiteKind.ASV: "--bench", SuiteKind.PYTEST: "-k"}


@dataclass(frozen=True, kw_only=True)
class SuiteSource:
    """One suite whose benchmarks an experiment measures, listed by each variant's own tool."""

    kind: SuiteKind
    # the Google Benchmark binary, the asv benchmark directory (or the folder of its
    # asv.conf.json), or the pytest file or folder
    path: str
    # in the suite's own terms: Google Benchmark's --benchmark_filter, a regular expression asv
    # finds in a name, pytest's -k expression; None: every benchmark of the suite
    filter: str | None = None

    def flags(self) -> tuple[str, ...]:
        """The suite as the command line gives it: --pytest PATH -k EXPR, --asv DIR --bench
        REGEX or --gbench BINARY --filter REGEX."""
        return (self.kind.flag, self.path, *self.filter_flags())

    def filter_flags(self) -> tuple[str, ...]:
        """The suite's filter as the command line gives it (-k, --bench, --filter)."""
        return () if self.filter is None else (self.kind.filter_flag, self.filter)

    def refused_beside(self) -> ConfigError:
        """The error of a suite given with another source of benchmarks: an experiment file,
        inline benchmarks, or a suite after it in precedence."""
        kinds = list(SuiteKind)
        later = [kind.flag for kind in kinds[kinds.index(self.kind) + 1 :]]
        others = ["an experiment file", "--stmt", "--setup", "--cmd", "--name", "--param", *later]
        return ConfigError(
            f"{self.kind.flag} makes the benchmarks: {', '.join(others[:-1])} and {others[-1]} "
            "cannot be combined with it",
            hint=_SELECT_HINTS[self.kind],
        )


_SELECT_HINTS = {
    SuiteKind.GBENCH: "select the binary's benchmarks with --filter REGEX; a variant's cmd= "
    "names its own binary",
    SuiteKind.ASV: "select the suite's benchmarks with --bench REGEX",
    SuiteKind.PYTEST: "select the suite's tests with -k EXPR",
}

# a filter given without its suite: what it selects, and the command that gives both
_ORPHAN_FILTERS = {
    SuiteKind.GBENCH: (
        "benchmarks of a Google Benchmark binary",
        "PATH",
        "perflab run --gbench ./build/bench --filter REGEX --variant A --variant B",
    ),
    SuiteKind.ASV: (
        "benchmarks of an asv suite",
        "DIR",
        "perflab run --asv benchmarks/ --bench REGEX --variant A --variant B",
    ),
    SuiteKind.PYTEST: (
        "tests of a pytest suite",
        "PATH",
        "perflab run --pytest tests/ -k EXPR --variant A --variant B",
    ),
}


def suite_given(
    record: SuiteSource | None = None,
    *,
    gbench: str | Path | None = None,
    gbench_filter: str | None = None,
    asv: str | Path | None = None,
    asv_filter: str | None = None,
    pytest: str | Path | None = None,
    pytest_filter: str | None = None,
) -> SuiteSource | None:
    """The one suite given, as a record or as make_experiment's keywords (None: none). Of the
    keywords, in precedence order, a filter without its suite is refused, and so is a later
    suite beside the first."""
    keyword_suites = (
        (SuiteKind.GBENCH, gbench, gbench_filter),
        (SuiteKind.ASV, asv, asv_filter),
        (SuiteKind.PYTEST, pytest, pytest_filter),
    )
    if record is not None and any(v is not None for _, *values in keyword_suites for v in values):
        raise ConfigError(
            "suite= gives the suite: gbench=, asv=, pytest= and their filters cannot be given "
            "beside it",
            hint="give the suite one way: suite=SuiteSource(...), or its keywords",
        )
    for place, (kind, path, selected) in enumerate(keyword_suites):
        if path is None and selected is not None:
            what, word, example = _ORPHAN_FILTERS[kind]
            raise ConfigError(
                f"{kind.filter_flag} selects {what}, and no {kind.flag} {word} is given",
                hint=example,
            )
        if path is None:
            continue
        source = SuiteSource(kind=kind, path=str(path), filter=selected)
        if any(later is not None for _, later, _ in keyword_suites[place + 1 :]):
            raise source.refused_beside()
        return source
    return record
