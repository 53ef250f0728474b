"""Every registered lens's descriptor is complete and true to its package."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from perflab.budget.perf_costs import Reading
from perflab.lenses import descriptor as descriptor_module
from perflab.lenses.descriptor import LensDescriptor, Probe, ProbeFacts
from perflab.lenses.registry import DESCRIPTORS, declared_options
from perflab.records.kinds import ArtifactScope, Metric
from perflab.records.run_facts import MachineInfo
from perflab.records.settings import setting_specs
from perflab.worker import COMMAND_LAUNCHER_PATH, STATEMENT_WORKER_PATH

CORE_OPS = {"setup", "check", "calibrate", "sample", "go", "end", "quit", "register"}
NOTHING = ProbeFacts(
    which=lambda tool: None,
    find_llvm=lambda tool: None,
    has_module=lambda name: False,
    perf_present=False,
    perf_software=False,
    perf_hardware=False,
    perf_sampled_event=None,
)


def test_metrics_are_unique() -> None:
    metrics = [d.metric for d in DESCRIPTORS]
    assert len(set(metrics)) == len(metrics)


def test_one_lens_measures_wall_time() -> None:
    """Shared analysis weighs every speed lens against it, asking the descriptors which it is."""
    assert [d.metric for d in DESCRIPTORS if d.figures.wall_time] == [Metric.TIME]


def test_instructions_are_the_countable_figure() -> None:
    """A workflow says "fewer instructions" but "less time", asking the descriptors which."""
    from perflab.lenses.registry import countable_metrics

    assert countable_metrics() == {Metric.INSTRUCTIONS}


def test_only_a_lens_that_runs_valgrind_runs_all_under_it() -> None:
    # the memory lens measures its footprint natively: one JIT cache serves both its sides
    under = {d.metric for d in DESCRIPTORS if d.planning.all_under_valgrind}
    assert under == {Metric.INSTRUCTIONS}
    assert all(d.planning.runs_valgrind for d in DESCRIPTORS if d.planning.all_under_valgrind)


@pytest.mark.parametrize("descriptor", DESCRIPTORS, ids=lambda d: str(d.metric))
def test_a_blind_spot_s_hooks_are_functions(descriptor: LensDescriptor) -> None:
    """A lens whose tool runs other code than the CPU says so in its words (`blind_spot`), hands
    every row its tool ran (`tool_rows`) and marks the rows (`cpu_ran`): the record holds the
    three together, and both hooks name a function."""
    blind = descriptor.explanation.blind_spot
    if blind is not None:
        for hook in (blind.tool_rows, blind.cpu_ran):
            module, _, name = hook.partition(":")
            assert callable(getattr(importlib.import_module(module), name))
        # the caveat's machine fact is read as a field of the run's machine, not a key
        assert blind.machine_fact in {f.name for f in fields(MachineInfo)}


@pytest.mark.parametrize("descriptor", DESCRIPTORS, ids=lambda d: str(d.metric))
def test_the_descriptor_builds_its_lens_and_probes(descriptor: LensDescriptor) -> None:
    assert descriptor.create().metric is descriptor.metric
    assert isinstance(descriptor.probe(NOTHING), Probe)
    package = descriptor.lens.partition(":")[0].rpartition(".")[0]
    assert package == f"perflab.lenses.{descriptor.metric}"
    for option in descriptor.options:
        # its spec names its lens (no spec: an option every lens may read, e.g. analysis_cache)
        assert option.spec.lens in (descriptor.metric, None), option.name
        assert option.spec.flags and option.spec.key == option.name, option.name
        assert option.spec.check is None or option.spec.check(option.default) is None


def test_option_names_are_one_lens_s() -> None:
    """A lens option is stored under its own name beside the core settings: no two lenses,
    and no core setting, may share one."""
    names = [option.name for d in DESCRIPTORS for option in d.options]
    assert len(set(names)) == len(names)
    assert not set(names) & set(setting_specs())
    assert set(declared_options()) == set(names)


def _stdlib_only_py37(path: Path) -> ast.Module:
    """Parses as Python 3.7 and imports only the standard library at module level (a lens's
    heavy dependency, e.g. torch, is imported inside its op)."""
    tree = ast.parse(path.read_text(), str(path), feature_version=(3, 7))
    for node in tree.body:
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        elif isinstance(node, ast.Try):
            names = [
                alias.name
                for child in node.body
                if isinstance(child, ast.Import)
                for alias in child.names
            ]
        for name in names:
            # or a module next to it (perflab/worker/process_tree.py), itself checked here
            sibling = path.with_name(name.split(".")[0] + ".py")
            assert name.split(".")[0] in sys.stdlib_module_names or sibling.is_file(), (
                f"{path.name} imports {name}"
            )
    return tree


@pytest.mark.parametrize("descriptor", DESCRIPTORS, ids=lambda d: str(d.metric))
def test_worker_ops_are_core_or_the_lens_s_own(descriptor: LensDescriptor) -> None:
    own: set[str] = set()
    if descriptor.worker.handlers is not None:
        spec = importlib.util.find_spec(descriptor.worker.handlers)
        assert spec is not None and spec.origin is not None
        tree = _stdlib_only_py37(Path(spec.origin))
        (ops,) = [
            node.value
            for node in tree.body
            if isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "OPS" for t in node.targets)
        ]
        assert isinstance(ops, ast.Dict)
        own = {key.value for key in ops.keys if isinstance(key, ast.Constant)}
    assert set(descriptor.worker.ops) <= CORE_OPS | own
    assert not own & CORE_OPS  # a lens cannot replace a core op


@pytest.mark.parametrize(
    "path",
    [
        STATEMENT_WORKER_PATH,
        *(
            STATEMENT_WORKER_PATH.with_name(f"statement_{part}.py")
            for part in ("copies", "cpu", "fork", "loop", "values")
        ),
        COMMAND_LAUNCHER_PATH,
        COMMAND_LAUNCHER_PATH.with_name("process_tree.py"),
    ],
    ids=str,
)
def test_the_worker_scripts_run_on_python_3_7_with_the_standard_library(path: Path) -> None:
    _stdlib_only_py37(path)


def test_every_descriptor_field_states_its_rule() -> None:
    """A new lens's author learns what to fill in from lenses/descriptor.py alone: each field of
    the descriptor and its records has a comment, on its line or just above it."""
    path = Path(descriptor_module.__file__ or "")
    lines = path.read_text().splitlines()
    records = {"LensDescriptor", "BlindSpot", "WorkerNeeds", "Planning", "Figures", "Explanation"}
    tree = ast.parse(path.read_text())
    bare = [
        f"{node.name}.{field.target.id}"
        for node in tree.body
        if isinstance(node, ast.ClassDef) and node.name in records
        for field in node.body
        if isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name)
        if "#" not in lines[field.lineno - 1]
        and not lines[field.lineno - 2].lstrip().startswith("#")
    ]
    assert not bare, f"fields without a comment stating their rule: {bare}"


def test_no_lens_is_registered_under_an_artifact_scope() -> None:
    """The store files a scope's artifacts beside the lenses': a lens of that name would read
    them as its own."""
    scopes = {ArtifactScope.OUTPUT_CHECK, ArtifactScope.CLUSTER}
    assert not scopes & {d.metric for d in DESCRIPTORS}


def test_a_shared_recording_is_read_a_way_measure_knows() -> None:
    """A descriptor names its reading as a `Reading` (budget/perf_costs.py, below both the
    catalogue and measure/), the enum measure/perf reads the recording back by."""
    for descriptor in DESCRIPTORS:
        shared = descriptor.planning.shares_recording
        if shared is not None:
            assert isinstance(shared.reading, Reading) and shared.name
