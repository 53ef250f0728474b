"""The profile section words a pair of functions as the analysis claims it: a dispatch only
where a resolver returns each side (measure.elf_dispatch), else the caller's callee changed."""

from __future__ import annotations

from perflab.lenses.profile.render import claim_blocks
from perflab.records.document import Paragraph


def _said(claim: str) -> list[str]:
    change = {"from": "dot.avx2", "to": "dot.sse4_2", "caller": "run", "claim": claim}
    blocks = claim_blocks("B", {"dispatch_changed": [change]})
    return [b.text for b in blocks if isinstance(b, Paragraph)]


def test_a_pair_is_worded_as_its_claim() -> None:
    assert _said("dispatch_changed") == [
        "dispatch changed in B: dot.avx2 → dot.sse4_2 (called from run)"
    ]
    assert _said("callee_changed") == [
        "callee changed in B: dot.avx2 → dot.sse4_2 (called from run)"
    ]
