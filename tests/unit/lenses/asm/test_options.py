"""The asm lens's options (lenses/asm/options.py): the functions to disassemble, and the shared
analysis cache every lens that symbolises reads."""

from __future__ import annotations

from perflab.lenses.asm.options import OPTIONS, symbols_of
from perflab.lenses.shared_options import ANALYSIS_CACHE
from perflab.records.settings import Settings


def test_the_functions_asked_for_or_none_for_the_hottest() -> None:
    assert symbols_of(Settings().with_options(symbols=["^kernel", "dot"])) == ("^kernel", "dot")
    assert symbols_of(Settings()) == ()


def test_the_analysis_cache_is_the_shared_option() -> None:
    assert [o.name for o in OPTIONS] == ["symbols", ANALYSIS_CACHE.name]
    assert OPTIONS[1] is ANALYSIS_CACHE
