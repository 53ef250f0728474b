"""The profiled region the asm lens keeps of a perf recording."""

from __future__ import annotations

import json

from perflab.lenses.asm.sources import profiled_region, region_from_json, region_to_json
from perflab.measure.perf.recordings import RecordedProfile
from perflab.tool_drivers.perf import CallGraph
from perflab.tool_output.perf_script import executable_mappings, parse_perf_script

PERF_SCRIPT = """\
k 38/38 1.0000: PERF_RECORD_MMAP2 38/38: [0x55f7(0x1000) @ 0x1000 fe:00 2]: r-xp /tmp/k
k 38/38 1.0001: PERF_RECORD_MMAP2 38/38: [0x7f79(0x156) @ 0x26000 fe:00 3]: r-xp /lib/c.so
k 38/38 1.0001: PERF_RECORD_MMAP2 38/38: [0x7f79(0x156) @ 0x26000 fe:00 3]: r--p /lib/d
k 38/38 1.0002: PERF_RECORD_MMAP2 38/38: [0x7f79(0x2000) @ 0 00:00 0 0]: r-xp [vdso]
k 38/38 1.0100:     250000 cpu-clock:      55f7feaa818e relu.constprop.0+0x2e (/tmp/k)
k 38/38 1.0350:     250000 cpu-clock:      55f7feaa818e relu.constprop.0+0x2e (/tmp/k)
k 38/38 1.0600:     250000 cpu-clock:      55f7feaa8190 relu.constprop.0+0x30 (/tmp/k)
k 38/38 1.0850:     250000 cpu-clock:      55f7feaa8300 [unknown] (/tmp/k)
k 38/38 1.1100:     250000 cpu-clock:  ffffffff8100 [unknown] ([kernel.kallsyms])
"""


def test_profile_lens_samples_as_the_asm_lens_keeps_them() -> None:
    samples = parse_perf_script(PERF_SCRIPT)
    assert len(samples) == 5  # the mmap records are not samples
    objects = executable_mappings(PERF_SCRIPT)
    assert objects == ("/tmp/k", "/lib/c.so")
    profile = RecordedProfile("cpu-clock", (), CallGraph.NONE, tuple(samples), objects=objects)
    region = profiled_region(profile)
    assert region.objects == objects
    assert region.total == 5
    assert region.by_function() == {("/tmp/k", "relu.constprop.0"): 3.0}
    assert region.offsets("/tmp/k", "relu.constprop.0") == {0x2E: 2.0, 0x30: 1.0}
    assert region.starts("/tmp/k", "relu.constprop.0") == {0x55F7FEAA8160: 3.0}
    assert region_from_json(json.loads(json.dumps(region_to_json(region)))) == region


def test_a_region_stored_before_symbol_starts_were_kept_still_loads() -> None:
    region = region_from_json({"samples": [["/tmp/k", "relu", 4, 2.0]], "objects": ["/tmp/k"]})
    assert region.offsets("/tmp/k", "relu") == {4: 2.0}
    assert region.starts("/tmp/k", "relu") == {}
