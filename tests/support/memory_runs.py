"""What the memory lens stores for a benchmark "b" (a command, `prog`): callgrind files written
in callgrind's format with the data costs asked for, and the peak RSS beside them; for the tests
of its analysis and its section (tests/unit/lenses/memory/)."""

from __future__ import annotations

from perflab.lenses.memory import MEMORY
from perflab.measure.callgrind.artifacts import KIND_COMMAND, KIND_EMPTY, KIND_STATEMENT
from perflab.records.model import Artifact, Benchmark, BenchmarkData, Sample
from perflab.tool_output.peak_memory import MAXRSS_KB

EVENTS = "Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw"


def callgrind(
    *, reads: int, writes: int, d1: tuple[int, int], ll: tuple[int, int], mallocs: int = 0
) -> str:
    """A callgrind file: one function with these data costs, calling malloc `mallocs` times."""
    lines = [
        "# callgrind format",
        "version: 1",
        "creator: callgrind-3.19.0",
        "cmd: /usr/bin/prog",
        "part: 1",
        "desc: I1 cache: 32768 B, 64 B, 8-way associative",
        "desc: D1 cache: 49152 B, 64 B, 12-way associative",
        "desc: LL cache: 2097152 B, 64 B, 16-way associative",
        "positions: line",
        f"events: {EVENTS}",
        "ob=(1) /usr/bin/prog",
        "fl=(1) prog.c",
        "fn=(1) kernel",
        f"10 1000 {reads} {writes} 0 {d1[0]} {d1[1]} 0 {ll[0]} {ll[1]}",
    ]
    if mallocs:
        lines += [
            "cob=(2) /usr/lib/x86_64-linux-gnu/libc.so.6",
            "cfi=(2) malloc.c",
            "cfn=(2) malloc",
            f"calls={mallocs} 0",
            "11 50 10 5 0 1 0 0 1 0",
            "ob=(2)",
            "fl=(2)",
            "fn=(2)",
            "20 50 10 5 0 1 0 0 1 0",
        ]
    return "\n".join(lines) + "\n"


def stored(
    variant: str,
    *,
    passes: int,
    mallocs: int = 0,
    repeats: int = 2,
    statement: bool = False,
    rss_kb: float = 10_000.0,
) -> tuple[list[Sample], list[Artifact]]:
    """What the lens stores for a variant whose loop makes `passes` trips over 1 MiB per
    iteration (10 iterations per repeat), under callgrind's cache simulation, and its peak RSS."""
    samples, artifacts = [], []
    lines = 1 << 14  # 1 MiB / 64 B
    for repeat in range(repeats):
        misses = passes * lines * 10 // 2
        text = callgrind(
            reads=passes * 10_000, writes=passes * 5_000, d1=(misses, misses),
            ll=(misses, misses), mallocs=mallocs * 10,
        )  # fmt: skip
        if statement:
            artifacts.append(Artifact("b", variant, MEMORY, KIND_STATEMENT, text, repeat))
            empty = callgrind(reads=100, writes=50, d1=(1, 1), ll=(1, 1))
            artifacts.append(Artifact("b", variant, MEMORY, KIND_EMPTY, empty, repeat))
        else:
            artifacts.append(Artifact("b", variant, MEMORY, KIND_COMMAND, text, repeat))
        samples.append(
            Sample(
                benchmark="b",
                variant=variant,
                metric=MEMORY,
                name="instructions",
                value=1000.0,
                loops=10,
                generation=repeat,
            )
        )
        samples.append(
            Sample(
                benchmark="b",
                variant=variant,
                metric=MEMORY,
                name=MAXRSS_KB,
                value=rss_kb,
                loops=1,
                generation=repeat,
                position=0,
            )
        )
    return samples, artifacts


def data(*variants: tuple[list[Sample], list[Artifact]]) -> BenchmarkData:
    return BenchmarkData(
        samples=tuple(s for v in variants for s in v[0]),
        artifacts=tuple(a for v in variants for a in v[1]),
    )


BENCHMARK = Benchmark("b", cmd="prog")
