"""What perflab knows about a lens without importing it.

Each lens package's `__init__.py` holds one `LensDescriptor`; `registry.py` lists them. The
command line's metric choices, the experiment files' and the API's lens options, `perflab
doctor`, and the engine's lens loop are all derived from the descriptors, so adding a lens is
adding its package and one line in the registry. Descriptors import nothing heavy: the lens
itself (and its dependencies) is imported only when a run uses it.

Writing a descriptor for a new lens:

- required: `metric`, `summary`, `lens` ("module:Class" of its `Lens`) and `probe`;
- optional, the user's side: `render` (else its verdict table alone), `options` and
  `also_reads` (else none);
- optional records, one per part of perflab that reads them, each empty by default:
  `worker` (`WorkerNeeds`: the statement-worker ops it sends, its own op handlers), `planning`
  (`Planning`: what the budget's plan prices and what the run arranges before it measures),
  `figures` (`Figures`: what its figures are and how they are analysed) and `explanation`
  (`Explanation`: what the summary may say from its comparisons). A lens that samples with
  the core worker ops needs none of them; what a new lens usually adds first is its cost model
  and, if its results do not depend on a quiet CPU, says so:
  `Planning(cost=..., needs_quiet_cpu=False)`.

A hook is a "module:function" string, imported only when called.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from perflab.budget.costs import CostModel, CostPart
from perflab.budget.perf_costs import Reading
from perflab.records.accounting import Accounting, CodeFacts, ToolRows
from perflab.records.code_findings import Finding
from perflab.records.kinds import Metric
from perflab.records.model import Comparison
from perflab.records.settings import LensOption

if TYPE_CHECKING:
    from perflab.measure.lens import Lens, LensAnalysis


@dataclass(frozen=True)
class ProbeFacts:
    """What `perflab doctor` found out about the machine, for the lenses' probes."""

    which: Callable[[str], str | None]  # a tool's path on PATH, or None
    find_llvm: Callable[[str], str | None]  # an LLVM tool, unversioned or versioned
    has_module: Callable[[str], bool]  # a Python module importable by perflab's interpreter
    perf_present: bool
    perf_software: bool  # software events count
    perf_hardware: bool  # cycles and instructions count
    perf_sampled_event: str | None  # what `perf record -e cycles` really sampled


@dataclass(frozen=True)
class Probe:
    """Whether a lens can run on this machine, why, and how to make it run."""

    available: bool
    detail: str
    fix: str | None = None


def load_hook(target: str) -> Any:
    """A "module:attribute" hook, imported now (a descriptor's hooks, a workflow's handler)."""
    module_name, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module_name), attribute)


@dataclass(frozen=True)
class BlindSpot:
    """A lens whose tool runs other code than the CPU does (valgrind hides CPU features, so
    code that picks its path by them runs another path under it): the rows its tool ran, how
    to mark them with what the CPU ran, and what the tool hides, in the lens's own words.
    Shared analysis checks the CPU lenses' dispatch changes against the rows
    (analyse/hidden_dispatch.py) and says the words where the lenses reading what the CPU ran
    saw a change this lens's figures could not (analyse/explanation.py, analyse/same_work.py),
    without naming the tool. The hooks and the words come together: a lens with one has all."""

    # "module:function" from one of the lens's comparisons to its `ToolRows` (records/
    # accounting.py): every function its tool ran, counted
    tool_rows: str
    # "module:function" from (details, function -> (what the CPU ran in the baseline, in the
    # variant)) to the lens's details with those rows saying it, or None when its details have
    # no such rows
    cpu_ran: str
    counts: str  # the lens's figures as a sentence's subject ("The instruction counts")
    hides: str  # what the tool hides, after the changes it could not see
    # the machine fact (a field of records.run_facts.MachineInfo) on which the notes' caveats
    # apply: elsewhere the tool and the CPU run the same code
    machine_fact: str
    same_code: str  # appended to a same-code or not-in-the-code note on such a machine
    beside_time: str  # appended to a disagreement with the wall-time lens on such a machine
    # a function's change in count per iteration below this is the tool's own residue (the
    # worker's handshake), not the code's: shared analysis reads the lens's figure, not its own
    residue_per_iteration: float


@dataclass(frozen=True)
class WorkerNeeds:
    """What the statement workers the lens starts run for it (docs/worker-protocol.md)."""

    # the ops the lens sends; ops beyond the core ones (setup, check, calibrate, sample, quit)
    # are the lens's own, handled by `handlers`
    ops: tuple[str, ...] = ("setup", "check", "calibrate", "sample")
    # the module (never imported by perflab) whose source defines the lens's own ops,
    # OPS = {name: handler}; sent to each worker the lens starts (stdlib only, Python 3.7+)
    handlers: str | None = None


@dataclass(frozen=True)
class SharedRecording:
    """A perf recording of a statement's measured region that the lens reads, and every other
    lens of a run that names the same recording reads too: one recording per variant, made by
    whichever of them measures first, read back once per reading they ask for, its blocks in the
    order drawn for the first of them listed (measure/perf/runs.py, `shared_recipe`). A
    command's recordings are each lens's own: each records its runs at its own rate."""

    name: str  # the recording (budget.perf_costs.CALL_GRAPH_RECORDING): one name, one recording
    reading: Reading  # how the lens reads it back


@dataclass(frozen=True)
class Planning:
    """What the budget's plan prices (budget/plan.py) and what the run arranges before the lens
    measures (engine/): read before any lens is imported."""

    # what the lens's minimum measurement of a benchmark costs (its package's cost.py); None:
    # one generation of workers, or `cost_parts`
    cost: CostModel | None = None
    # a lens measured through other lenses' measurements: its cost is theirs, each priced by its
    # own lens's model and combined by the plan (budget.composed_cost); `cost` is then None
    cost_parts: tuple[CostPart, ...] = ()
    # the lens runs valgrind: the budget's probe times valgrind's start-up here and now, to
    # scale the lens's cost model (budget.MachineSpeed)
    runs_valgrind: bool = False
    # every process the lens starts for a statement runs under valgrind (not so the memory lens,
    # whose footprint is measured natively): they get a JIT cache for the CPU features valgrind
    # shows (engine/prepare/caches.py, IsolatedCaches.for_valgrind)
    all_under_valgrind: bool = False
    # the lens's results depend on a quiet measuring CPU (wall time, hardware counters): a run
    # of lenses that do not (instruction counts, simulated caches, disassembly) does not wait
    # for a CPU another perflab run is measuring on
    needs_quiet_cpu: bool = True
    # the lens reports its own overruns of the budget, so the engine adds no "took longer than
    # its share" note
    reports_overruns: bool = False
    # a statement's perf recording the lens reads with other lenses of the run: made once for
    # all of them (and priced once, `budget.CostProbe.shared_recordings`); None: its own
    shares_recording: SharedRecording | None = None
    # the lens may start before the variants' native runs that fill their JIT caches are done
    # (engine/run.py), and waits for them itself before any of its processes runs a set-up
    # (`LensContext.native_fill_done`): the instructions lens's fork servers import meanwhile
    starts_before_native_fill: bool = False


@dataclass(frozen=True)
class Figures:
    """What the lens's figures are and how analysis (analyse/) may reach them."""

    # the lens measures the whole statement's wall time: the question every speed lens stands
    # in for, so the explanation and the notes weigh the other lenses against it
    wall_time: bool = False
    # the lens sees the measured region a command reports alone (Google Benchmark's
    # iterations: their time, or callgrind counting its last run), not the whole process
    sees_region: bool = False
    # the lens gives a variant's own figures (`LensAnalysis.measurements`) when it is the run's
    # only one, so a run of one variant may ask for it; the others only compare variants
    measures_alone: bool = False
    # the lens is analysed from its samples alone (no artifacts: profiles, call graphs), so a
    # run read back from a JSON document can be compared by it (analyse/compare.py)
    analysed_from_samples: bool = False
    # the lens's figure counts things (instructions): a fall is "fewer", not "less" (a
    # workflow's words where two lenses disagree, report/workflow_views.py)
    countable: bool = False
    # "module:function" taking `Lens.analyse`'s arguments (benchmark, variants, data,
    # experiment) to a `LensAnalysis` of the comparisons' figures alone (ratio, interval,
    # verdict, values; no details, notes or measurements), the same to the bit as `analyse`
    # gives: what a published site's trends read, for less; None: the whole analysis is as cheap
    analysis: str | None = None
    # "module:function" from (benchmark, data, baseline, variant, preemption) to unit -> the
    # mean ratio of the pair's samples in that unit, so that an interaction of two changes is
    # paired unit by unit (analyse/design_analysis.py); None: from the two intervals alone
    paired_units: str | None = None


@dataclass(frozen=True)
class Explanation:
    """What the run's summary (analyse/explanation.py and the notes it draws on) may say from
    the lens's comparisons. Empty: the lens's figures are weighed, never explained by it."""

    # "module:function" from one of the lens's comparisons to its `Accounting` (records/
    # accounting.py): the pair's difference function by function, which the explanation
    # weighs; the first such lens in the registry with a comparison is the one it accounts
    # for, the next its fallback; None: the lens accounts for no difference
    accounts: str | None = None
    # the lens's diagnoses are claims about functions, which the explanation joins to every
    # lens's rows of the same function (analyse/pair_claims.py)
    claims_about_functions: bool = False
    # the lens reads the machine code itself (disassembly): where it and a sampling lens both
    # claim what ran in a function's place, its words are the ones shown
    reads_machine_code: bool = False
    # "module:function" from one of the lens's comparisons to its `CodeFacts` (records/
    # accounting.py): what it found the same, changed where nothing ran, or placed differently,
    # which the explanation says beside the difference; None: nothing of the kind
    code_facts: str | None = None
    # "module:function" from one of the lens's comparisons to a `code_findings.Finding` (did
    # the pair run the same code, analyse/same_work.py) or None; only lenses that can tell
    # code apart have one
    same_code: str | None = None
    # how the lens reads where the hot code lies, in words, said where nobody read it beside
    # the same counts and a time difference; None: it does not read it
    reads_placement: str | None = None
    # what the lens's figure is, beside the time lens's whole-statement wall time, and why the
    # two can differ: said when they disagree (same_work.disagreement_notes); None: not a speed
    # lens the time lens is compared with
    beside_time: str | None = None
    # the lens's tool runs other code than the CPU does; None: it runs what the CPU runs
    blind_spot: BlindSpot | None = None


@dataclass(frozen=True)
class LensDescriptor:
    """One lens: what the user sees of it (its metric, summary, doctor probe, report section and
    options), how to build it, and one record for each part of perflab that asks about it."""

    metric: Metric  # the lens's name: its --metric choice and its results' metric
    summary: str  # what the lens measures, in a few words (--metric's help, doctor)
    lens: str  # "module:Class" of the Lens, imported lazily
    probe: Callable[[ProbeFacts], Probe]  # whether it runs on this machine (perflab doctor)
    # "module:function" building the lens's report `Section` from its comparisons; None: its
    # verdict table alone
    render: str | None = None
    # the options this lens owns (its CLI options, experiment-file keys and API keywords)
    options: tuple[LensOption, ...] = ()
    # other lenses' options this lens reads too (the memory lens measures through the
    # instructions lens's callgrind runs, so --region applies to it): given with this lens
    # alone, they are not an error
    also_reads: tuple[str, ...] = ()
    # the kinds of a suite's benchmarks whose figure this lens alone gives (asv's `peakmem`,
    # `track`): the suite's benchmarks of that kind are measured by it alone
    suite_kinds: tuple[str, ...] = ()
    # the JSON document's top-level lists this lens's findings fill (`LensFindings.to_json`),
    # present in every document, empty where it found nothing: readers may rely on them
    top_level_lists: tuple[str, ...] = ()
    # what each part of perflab asks about the lens; the defaults suit a lens that samples with
    # the core worker ops, costs one generation of workers, needs a quiet CPU, and explains nothing
    worker: WorkerNeeds = WorkerNeeds()  # the statement workers (measure/)
    planning: Planning = Planning()  # the budget's plan and the run (budget/, engine/)
    figures: Figures = Figures()  # analysis of the figures (analyse/)
    explanation: Explanation = Explanation()  # the run's summary (analyse/explanation.py)

    def create(self) -> Lens:
        """The lens itself (importing its package's measuring code and dependencies)."""
        lens: Lens = load_hook(self.lens)()
        return lens

    def same_code_finding(self, comparison: Comparison) -> Finding | None:
        """The lens's finding on whether a pair ran the same code (its `same_code` hook)."""
        if self.explanation.same_code is None:
            return None
        finding: Finding | None = load_hook(self.explanation.same_code)(comparison)
        return finding

    def paired_units_of(self) -> Callable[..., dict[int, float]] | None:
        """The lens's `paired_units` hook, imported now; None where it has none."""
        hook = self.figures.paired_units
        paired: Callable[..., dict[int, float]] | None = load_hook(hook) if hook else None
        return paired

    def with_cpu_ran(self, details: Any, ran: Mapping[str, tuple[str, str]]) -> Any:
        """The lens's details with its rows saying what the CPU ran (its blind spot's `cpu_ran`
        hook), or None where it has no blind spot or no such rows."""
        blind = self.explanation.blind_spot
        if blind is None:
            return None
        return load_hook(blind.cpu_ran)(details, ran)

    def accounting(self, comparison: Comparison) -> Accounting | None:
        """The lens's account of a pair's difference (its `accounts` hook), or None."""
        if self.explanation.accounts is None:
            return None
        found: Accounting = load_hook(self.explanation.accounts)(comparison)
        return found

    def facts_of(self, comparison: Comparison) -> CodeFacts | None:
        """The lens's facts about a pair's code (its `code_facts` hook), or None."""
        if self.explanation.code_facts is None:
            return None
        found: CodeFacts = load_hook(self.explanation.code_facts)(comparison)
        return found

    def rows_of(self, comparison: Comparison) -> ToolRows | None:
        """Every function the lens's tool ran (its blind spot's `tool_rows` hook), or None."""
        blind = self.explanation.blind_spot
        if blind is None:
            return None
        found: ToolRows = load_hook(blind.tool_rows)(comparison)
        return found

    def figures_analysis(self) -> Callable[..., LensAnalysis]:
        """The lens's analysis of its comparisons' figures alone: its figures' `analysis` hook,
        else its whole analysis (importing the lens now)."""
        if self.figures.analysis is None:
            return self.create().analyse
        analyse: Callable[..., LensAnalysis] = load_hook(self.figures.analysis)
        return analyse

    def renderer(self) -> Callable[..., Any] | None:
        """The lens's `render` hook, imported now; None where it has none."""
        renderer: Callable[..., Any] | None = load_hook(self.render) if self.render else None
        return renderer
