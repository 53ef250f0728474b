"""The asm lens's options, declared for its descriptor (the CLI options, experiment-file keys and
API keywords are derived from them), and their typed values in a run's settings."""

from __future__ import annotations

from perflab.lenses.descriptor import LensOption
from perflab.records.kinds import Metric
from perflab.records.settings import SettingKind, Settings, SettingSpec

SYMBOLS = LensOption(
    "symbols",
    (),
    SettingSpec(
        SettingKind.TEXTS,
        "asm: functions to disassemble (default: the hottest)",
        key="symbols",
        flags=("--symbol",),
        lens=Metric.ASM,
        repeat=True,
        metavar="REGEX",
    ),
)
# every lens that symbolises object files reads it (instructions and memory too, through
# perflab.lenses.registry.lens_option), so its spec names no lens: given without asm it is
# not an error
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
OPTIONS = (SYMBOLS, ANALYSIS_CACHE)


def symbols_of(settings: Settings) -> tuple[str, ...]:
    """The regexes of the functions to disassemble (empty: the hottest)."""
    value: tuple[str, ...] = SYMBOLS.value(settings)
    return value


def analysis_cache_of(settings: Settings) -> bool:
    """Whether the analysis cache is read and written."""
    return bool(ANALYSIS_CACHE.value(settings))
