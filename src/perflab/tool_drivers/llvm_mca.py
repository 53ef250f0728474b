"""llvm-mca (LLVM's machine code analyser) run through the process seam: the static throughput of
a loop body on the scheduling model of this machine's CPU (or the closest older one this llvm-mca
knows), kept in the analysis cache. Its output is read by tool_output/llvm_mca.py."""

from __future__ import annotations

from collections.abc import Collection

from perflab.machine.host import cpu_flags, cpuinfo_fields, read_text
from perflab.machine.proc import LaunchSpec, ProcessRunner
from perflab.store.analysis_cache import AnalysisCache
from perflab.tool_drivers.debuginfo import tool_identity
from perflab.tool_output.llvm_mca import LoopThroughput, parse_mca_summary, parse_mcpu_help

DEFAULT_MCPU = "native"  # LLVM's own host detection, when the CPU is not one we can name
# a newer model than this LLVM knows -> the closest older one it does know
_OLDER_MODEL = {
    "znver5": "znver4",
    "znver4": "znver3",
    "znver3": "znver2",
    "graniterapids": "sapphirerapids",
    "sapphirerapids": "icelake-server",
    "icelake-server": "cascadelake",
    "cascadelake": "skylake-avx512",
}
# one loop body's prediction; a timed-out one leaves that loop without a prediction (and is not
# cached)
MCA_TIMEOUT_S = 30.0
MCA_KIND = "llvm-mca"  # the analysis cache's entries: one loop body's prediction


def host_mcpu(cpuinfo: str) -> str:
    """The llvm-mca CPU model of the machine described by /proc/cpuinfo text: the scheduling
    model must be the host's, or predicted cycles describe another machine (an AMD EPYC guest
    is not a Sapphire Rapids). `native` when the CPU is not recognised."""
    fields = cpuinfo_fields(cpuinfo)
    flags = cpu_flags(cpuinfo)
    try:
        family = int(fields.get("cpu family", "0"))
        model = int(fields.get("model", "0"))
    except ValueError:
        return DEFAULT_MCPU
    vendor = fields.get("vendor_id", "")
    if vendor == "AuthenticAMD":
        if family == 0x17:
            return "znver2" if model >= 0x30 else "znver1"
        if family == 0x19:
            zen4 = 0x10 <= model <= 0x1F or 0x60 <= model <= 0x7F or 0xA0 <= model <= 0xAF
            return "znver4" if zen4 else "znver3"
        if family == 0x1A:
            return "znver5"
        return DEFAULT_MCPU
    if vendor == "GenuineIntel":
        if "amx_tile" in flags:
            return "sapphirerapids"
        if "avx512_vbmi2" in flags:
            return "icelake-server"
        if "avx512_vnni" in flags:
            return "cascadelake"
        if "avx512f" in flags:
            return "skylake-avx512"
        if "avx2" in flags:
            return "skylake"
    return DEFAULT_MCPU


def supported_model(wanted: str, known: Collection[str]) -> str:
    """`wanted`, or the closest older model this llvm-mca knows (`native` as the last resort);
    an empty `known` means the list could not be read, and `wanted` is tried as is."""
    model = wanted
    while known and model not in known and model != DEFAULT_MCPU:
        model = _OLDER_MODEL.get(model, DEFAULT_MCPU)
    return model


class McaPredictor:
    """Runs llvm-mca through the process seam; `available` is False when the tool is missing."""

    def __init__(
        self,
        runner: ProcessRunner,
        cpu: str | None = None,
        tool: str | None = None,
        *,
        cache: AnalysisCache | None = None,
    ) -> None:
        """`cpu`: the llvm-mca model; None picks the host's (from /proc/cpuinfo), falling back
        to the closest older model this llvm-mca knows. Predictions are kept in the analysis
        `cache` under llvm-mca's identity, the models and the loop's text."""
        self.runner = runner
        self.tool = tool or runner.which("llvm-mca") or runner.which("llvm-mca-14")
        self.cache = cache
        self._known: frozenset[str] | None = None
        self.cpu = cpu or supported_model(host_mcpu(read_text("/proc/cpuinfo") or ""), self.known)

    @property
    def known(self) -> frozenset[str]:
        """The CPU models this llvm-mca has (empty when it cannot say)."""
        if self._known is None:
            self._known = frozenset()
            if self.tool is not None:
                done = self.runner.run(LaunchSpec(argv=(self.tool, "-mcpu=help")), stdin_text="")
                self._known = parse_mcpu_help(done.stdout + done.stderr)
        return self._known

    @property
    def avx512_cpu(self) -> str:
        """The model for loops the host's model cannot execute (AVX-512 code on a CPU without
        it): the nearest model with AVX-512 that this llvm-mca knows; named in the output."""
        for model in ("znver4", "sapphirerapids", "icelake-server", "skylake-avx512"):
            if not self.known or model in self.known:
                return model
        return DEFAULT_MCPU

    @property
    def available(self) -> bool:
        return self.tool is not None

    def __call__(self, assembly: str) -> LoopThroughput | None:
        if self.tool is None:
            return None
        if self.cache is None:
            return self._predict(assembly)
        key = [tool_identity(self.tool) or self.tool, self.cpu, self.avx512_cpu, assembly]
        stored = self.cache.get(MCA_KIND, key)
        if isinstance(stored, dict):
            try:
                return LoopThroughput.from_json(stored)
            except (KeyError, TypeError, ValueError):
                self.cache.stats.ignored += 1
        predicted = self._predict(assembly)
        if predicted is not None:  # a failure may be a timeout on a busy machine: not kept
            self.cache.put(MCA_KIND, key, predicted.to_json())
        return predicted

    def _predict(self, assembly: str) -> LoopThroughput | None:
        assert self.tool is not None
        for cpu in dict.fromkeys((self.cpu, self.avx512_cpu)):
            done = self.runner.run(
                LaunchSpec(argv=(self.tool, f"-mcpu={cpu}", "-iterations=100", "-")),
                stdin_text=assembly,
                timeout_s=MCA_TIMEOUT_S,
            )
            if done.ok:
                return parse_mca_summary(done.stdout, cpu)
            if "unsupported instruction" not in done.stderr:
                break
        # an instruction llvm-mc cannot assemble (rare capstone spellings) fails this one loop only
        return None
