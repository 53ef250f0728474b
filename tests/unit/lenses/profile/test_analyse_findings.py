"""The profile lens's findings: each variant's recording summarised, the JSON document's
`profiles`."""

from __future__ import annotations

from perflab.lenses.profile.analyse import ProfileFindings, RecordingSummary
from perflab.tool_output.profile_stacks import HotSymbols, ObjectShare, SymbolShare

SUBJECT = "perflab.lenses.profile.analyse"


def _hot(n_symbols: int) -> HotSymbols:
    symbols = tuple(SymbolShare(f"f{i}", "lib.so", 1, 1, 0.01, 0.01) for i in range(n_symbols))
    return HotSymbols(n_symbols, symbols, (ObjectShare("lib.so", n_symbols, 1.0),))


def test_each_recording_is_a_row_of_profiles_naming_its_benchmark() -> None:
    facts = {"requested_event": "cycles", "samples": 30, "mapped_objects": ["/lib.so"]}
    found = ProfileFindings(
        "b", (RecordingSummary("A", facts, _hot(25)), RecordingSummary("B", {}, _hot(1)))
    )
    first, second = found.to_json()["profiles"]
    # the recording's own facts beside its hot symbols; the mapped objects stay in the store
    assert list(first) == [
        "benchmark",
        "variant",
        "requested_event",
        "samples",
        "hot_symbols",
        "objects",
    ]
    assert (first["benchmark"], first["variant"], second["variant"]) == ("b", "A", "B")
    assert len(first["hot_symbols"]) == 20  # the hottest only
    assert first["objects"] == [{"object": "lib.so", "self_samples": 25, "self_share": 1.0}]
