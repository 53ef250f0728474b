"""The lens options more than one lens reads, declared once. The lens that owns one lists it among
its descriptor's options (its CLI option, experiment-file key and API keyword are derived from
that), and every reader takes its typed value here, since no lens imports another."""

from __future__ import annotations

from perflab.records.kinds import Metric
from perflab.records.settings import LensOption, SettingKind, Settings, SettingSpec

# the instructions lens's; the memory lens counts commands inside it too
REGION = LensOption(
    "region",
    None,
    SettingSpec(
        SettingKind.TEXT,
        "instructions, memory (commands): count only inside this function",
        key="region",
        flags=("--region",),
        lens=Metric.INSTRUCTIONS,
    ),
)
# the instructions lens's; the memory lens's plan prices its counting with it on
CACHE_SIM = LensOption(
    "cache_sim",
    False,
    SettingSpec(
        SettingKind.BOOLEAN,
        "instructions: simulate caches and branches",
        key="cache_sim",
        flags=("--cache-sim",),
        lens=Metric.INSTRUCTIONS,
    ),
)
# the asm lens's; every lens that symbolises object files reads it (instructions and memory
# too, and analysis), so its spec names no lens: given without asm it is not an error
ANALYSIS_CACHE = LensOption(
    "analysis_cache",
    True,
    SettingSpec(
        SettingKind.BOOLEAN,
        "asm: neither read nor write the analysis cache (symbol tables, disassembly, inline "
        "frames, llvm-mca results kept by build-id under ~/.cache/perflab/analysis)",
        key="analysis_cache",
        flags=("--no-analysis-cache",),
    ),
)


def region_of(settings: Settings) -> str | None:
    """Commands: the function counting is limited to (None: the whole process)."""
    value: str | None = REGION.value(settings)
    return value


def cache_sim_of(settings: Settings) -> bool:
    """Whether callgrind simulates caches and branches."""
    return bool(CACHE_SIM.value(settings))


def analysis_cache_of(settings: Settings) -> bool:
    """Whether the analysis cache is read and written."""
    return bool(ANALYSIS_CACHE.value(settings))
