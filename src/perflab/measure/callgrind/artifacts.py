"""How a callgrind run's results are stored, and read back: the sample name of its counts, the
artifact kinds of its dump files, and valgrind's words when it could not run a variant's code.
The instructions lens writes them; the memory lens, which counts through the same runs, reads
them too."""

from __future__ import annotations

import json
from collections.abc import Sequence

from perflab.measure.lens import BenchmarkData
from perflab.records.model import Artifact
from perflab.tool_output.callgrind import CallgrindPart
from perflab.tool_output.callgrind_format import parse_callgrind

SAMPLE_NAME = "instructions"
KIND_STATEMENT = "callgrind.stmt"
KIND_EMPTY = "callgrind.empty"
KIND_COMMAND = "callgrind"
KIND_INLINE_FRAMES = "callgrind.inline-frames"
KIND_OBJECTS = "callgrind.objects"  # JSON: object path -> identity (build-id or sha256)
# JSON {"valgrind": its words}: valgrind stopped at an instruction it cannot execute in this
# variant's code (valgrind 3.19 decodes no AVX-512), so the variant has no counts
KIND_UNAVAILABLE = "callgrind.unavailable"


def parts_of(artifacts: Sequence[Artifact]) -> list[CallgrindPart]:
    parts: list[CallgrindPart] = []
    for artifact in artifacts:
        parts.extend(parse_callgrind(artifact.content).parts)
    return parts


def unexecutable_reason(
    data: BenchmarkData, variant: str, kind: str = KIND_UNAVAILABLE
) -> str | None:
    """Valgrind's words where it could not execute the variant's code (stored as `kind`), else
    None."""
    stored = data.artifacts_of(variant, kind)
    if not stored:
        return None
    return str(json.loads(stored[0].content).get("valgrind") or "valgrind could not run it")
