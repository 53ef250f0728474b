"""`perflab run --metric asm` and `perflab show RUN --asm FUNCTION` end to end, on a C kernel built
here twice: -O2 (SSE) and -O3 with 512-bit AVX-512 vectors."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.cli_commands import perflab  # sys.executable -m perflab.cli.main, in cwd

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc"),
    pytest.mark.skipif(shutil.which("perf") is None, reason="needs perf"),
    pytest.mark.skipif(
        "avx512f" not in Path("/proc/cpuinfo").read_text(), reason="the -O3 build needs AVX-512"
    ),
]

# ~0.2 s at -O2: enough cpu-clock samples to rank the kernel first, short on a shared machine
KERNEL = """
#include <stdlib.h>
float in_buf[4096], out_buf[4096];
void relu(float *restrict out, const float *restrict in, int n) {
  for (int i = 0; i < n; i++) out[i] = in[i] > 0.f ? in[i] : 0.f;
}
int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 100000;
  for (int i = 0; i < 4096; i++) in_buf[i] = (float)(i % 7) - 3.f;
  for (int r = 0; r < reps; r++) {
    relu(out_buf, in_buf, 4096);
    in_buf[r & 4095] += out_buf[(r * 7) & 4095];
  }
  return (int)out_buf[1];
}
"""


def test_asm_run_then_show_the_side_by_side_listing(tmp_path: Path) -> None:
    (tmp_path / "k.c").write_text(KERNEL)
    for name, flags in (("a", ["-O2"]), ("b", ["-O3", "-mavx512f", "-mprefer-vector-width=512"])):
        subprocess.run(["gcc", *flags, "-o", name, "k.c"], cwd=tmp_path, check=True)

    done = perflab(
        *("run", "--cmd", "./a", "--variant", "a", "--variant", "b cmd=./b", "--metric", "asm"),
        *("--quiet", "--json", "out.json", "--store", "s.db"),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    (comparison,) = json.loads((tmp_path / "out.json").read_text())["comparisons"]
    assert comparison["metric"] == "asm"
    assert comparison["verdict"] == "inconclusive"  # different code; its size says nothing of speed
    hottest = comparison["functions"][0]  # relu, or main when gcc inlined relu into it
    widths = (hottest["baseline"]["vector_width_bits"], hottest["variant"]["vector_width_bits"])
    assert widths == (128, 512)

    shown = perflab("show", "latest", "--asm", hottest["name"], "--store", "s.db", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(hottest["name"])
    assert "a -> b" in shown.stdout.splitlines()[0]
    assert "xmm" in shown.stdout and "zmm" in shown.stdout  # both variants' listings

    missing = perflab("show", "latest", "--asm", "nosuchfn", "--store", "s.db", cwd=tmp_path)
    assert missing.returncode == 2
    assert "nosuchfn" in missing.stderr
