"""The instructions lens: callgrind instruction counts of the measured region."""

from perflab.lenses.descriptor import (
    BlindSpot,
    Explanation,
    Figures,
    LensDescriptor,
    Planning,
    Probe,
    ProbeFacts,
    WorkerNeeds,
)
from perflab.lenses.instructions.cost import instructions_cost
from perflab.lenses.instructions.metric import INSTRUCTIONS as INSTRUCTIONS
from perflab.lenses.instructions.options import OPTIONS

# instructions per iteration below which a function's change is the worker handshake's residue
# (drop_gil, _Py_read ...), not the code's: the lens's accounting and same-code check and the
# shared analysis of what valgrind hid all read this one figure
RESIDUE = 2.0


def _probe(facts: ProbeFacts) -> Probe:
    if facts.which("valgrind"):
        return Probe(True, "valgrind callgrind")
    return Probe(False, "valgrind is missing", "sudo apt-get install valgrind")


DESCRIPTOR = LensDescriptor(
    metric=INSTRUCTIONS,
    summary="instruction counts (valgrind callgrind), per function and library",
    lens="perflab.lenses.instructions.measure:InstructionsLens",
    probe=_probe,
    render="perflab.lenses.instructions.render:section",
    options=OPTIONS,
    worker=WorkerNeeds(
        ops=("setup", "check", "sample", "callgrind_probe", "callgrind_sample"),
        handlers="perflab.worker.callgrind_ops",
    ),
    planning=Planning(
        cost=instructions_cost,
        runs_valgrind=True,
        all_under_valgrind=True,
        needs_quiet_cpu=False,
        starts_before_native_fill=True,
    ),
    # a lone variant's own count
    figures=Figures(sees_region=True, measures_alone=True, countable=True),
    explanation=Explanation(
        accounts="perflab.lenses.instructions.account:accounting",
        claims_about_functions=True,
        code_facts="perflab.lenses.instructions.code_facts:code_facts",
        same_code="perflab.lenses.instructions.same_code:same_code",
        beside_time="the instructions lens counts instructions under valgrind; time also "
        "depends on cache misses, branches, the clock and vector width, so "
        "fewer instructions can take longer",
        blind_spot=BlindSpot(
            tool_rows="perflab.lenses.instructions.account:tool_rows",
            cpu_ran="perflab.lenses.instructions.details:details_with_cpu_ran",
            counts="The instruction counts",
            hides="valgrind hides AVX-512 from the code it runs",
            machine_fact="avx512",
            same_code="; valgrind hides AVX-512 from the code it counts, so code this CPU picks "
            "by its features (AVX-512 kernels) may differ outside it",
            beside_time="; valgrind hides AVX-512, so on this AVX-512 machine code that picks "
            "its path by the CPU's features ran its AVX2 path there",
            residue_per_iteration=RESIDUE,
        ),
    ),
)
