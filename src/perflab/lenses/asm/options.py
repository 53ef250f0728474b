"""The asm lens's options, declared for its descriptor (the CLI options, experiment-file keys and
API keywords are derived from them), and their typed values in a run's settings."""

from __future__ import annotations

from perflab.lenses.asm.metric import ASM
from perflab.lenses.shared_options import ANALYSIS_CACHE
from perflab.records.settings import LensOption, SettingKind, Settings, SettingSpec

SYMBOLS = LensOption(
    "symbols",
    (),
    SettingSpec(
        SettingKind.TEXTS,
        "asm: functions to disassemble (default: the hottest)",
        key="symbols",
        flags=("--symbol",),
        lens=ASM,
        repeat=True,
        metavar="REGEX",
    ),
)
# ANALYSIS_CACHE: every lens that symbolises object files reads it, so it is declared with the
# shared options
OPTIONS = (SYMBOLS, ANALYSIS_CACHE)


def symbols_of(settings: Settings) -> tuple[str, ...]:
    """The regexes of the functions to disassemble (empty: the hottest)."""
    value: tuple[str, ...] = SYMBOLS.value(settings)
    return value
