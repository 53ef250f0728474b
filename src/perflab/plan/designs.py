"""Experiments over a set of changes: a stack (each commit against its parent, and the whole
range against its base) and a matrix (each change on each base, and how its effect differs
between bases). Planning turns them into variants and (baseline, variant) pairs of one
interleaved experiment; analysis turns the comparisons into step products and interactions."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from perflab.git.repo import find_repository, range_commits
from perflab.lenses.registry import wall_time_metrics
from perflab.machine.proc import ProcessRunner, SubprocessRunner
from perflab.records.errors import ConfigError
from perflab.records.model import VARIANT_FIELDS, Experiment, InteractionSpec, Variant

# ---- planning


@dataclass(frozen=True)
class Design:
    """A stack's or a matrix's plan: its variants and the comparisons between them."""

    variants: tuple[Variant, ...]
    pairs: tuple[tuple[str, str], ...]
    stack: tuple[str, ...] = ()
    interactions: tuple[InteractionSpec, ...] = ()
    repository: str | None = None
    notes: tuple[str, ...] = ()  # said before measuring and kept with the run


def _templated(template: Variant | None, name: str, git: str, apply: tuple[str, ...]) -> Variant:
    base = template or Variant(name="template")
    return replace(base, name=name, git=git, apply=apply)


def plan_stack(
    range_text: str,
    *,
    runner: ProcessRunner,
    repository: str | None = None,
    template: Variant | None = None,
    first_parent: bool | None = None,
) -> Design:
    """`A..B`: variants `base` (A) and `step1`..`stepN` (the commits after A, oldest first);
    pairs: each step against its predecessor, then the whole range (stepN against base).
    A range with merges is followed along its first-parent line (`first_parent` None: when it
    has merges; False: refused): each merge is a step, against its first parent."""
    if template is not None and template.git:
        raise ConfigError("git= is set by the stack itself", hint="leave git= out of --each")
    repository = repository or find_repository(runner, os.getcwd())
    commits = range_commits(runner, repository, range_text, first_parent=first_parent)
    names = ["base"] + [f"step{i}" for i in range(1, len(commits.commits) + 1)]
    refs = [commits.base.commit] + [c.commit for c in commits.commits]
    variants = tuple(_templated(template, n, r, ()) for n, r in zip(names, refs, strict=True))
    pairs = [(names[i - 1], names[i]) for i in range(1, len(names))]
    if len(names) > 2:
        pairs.append((names[0], names[-1]))
    notes: tuple[str, ...] = ()
    if commits.first_parent:
        merged = [
            f"{name} = {c.short} {c.subject!r}"
            for name, c in zip(names[1:], commits.commits, strict=True)
            if c.commit in commits.merges
        ]
        why = "it holds merges" if first_parent is None else "--first-parent"
        notes = (
            f"the range {range_text} is followed along its first-parent line ({why}): each "
            "merge is measured against its first parent, the effect of everything it merged"
            + (f"; merges: {', '.join(merged)}" if merged else ""),
        )
    return Design(
        variants=variants,
        pairs=tuple(pairs),
        stack=tuple(names),
        repository=repository,
        notes=notes,
    )


_UNSAFE = re.compile(r"[^A-Za-z0-9_.+-]+")


def _label(text: str) -> str:
    path = Path(text)
    if text.endswith((".patch", ".diff")):
        text = path.stem
    label = _UNSAFE.sub("-", text).strip("-") or "x"
    return label


def plan_matrix(
    bases: Sequence[str],
    changes: Sequence[str],
    *,
    runner: ProcessRunner,
    repository: str | None = None,
    template: Variant | None = None,
) -> Design:
    """Variants: each base, and each change applied on each base (`CHANGE@BASE`); pairs: each
    cell against its base; interactions: each change on every base against the first base."""
    if not bases or not changes:
        raise ConfigError(
            "a matrix needs at least one --base and one --change",
            hint="e.g. perflab matrix --base main --base release-2.1 --change fix-a.patch",
        )
    if template is not None and (template.git or template.apply):
        raise ConfigError(
            "git= and apply= are set by the matrix itself", hint="leave them out of --each"
        )
    repository = repository or find_repository(runner, os.getcwd())
    base_names = _unique([_label(b) for b in bases])
    change_sources = [os.path.abspath(c) if os.path.isfile(c) else c for c in changes]
    change_names = _unique([_label(c) for c in changes])
    variants: list[Variant] = []
    pairs: list[tuple[str, str]] = []
    for base_name, base_ref in zip(base_names, bases, strict=True):
        variants.append(_templated(template, base_name, base_ref, ()))
        for change_name, source in zip(change_names, change_sources, strict=True):
            cell = f"{change_name}@{base_name}"
            variants.append(_templated(template, cell, base_ref, (source,)))
            pairs.append((base_name, cell))
    interactions = tuple(
        InteractionSpec(
            change=change_name,
            base=base_name,
            reference_base=base_names[0],
            on_base=f"{change_name}@{base_name}",
            on_reference=f"{change_name}@{base_names[0]}",
        )
        for change_name in change_names
        for base_name in base_names[1:]
    )
    return Design(
        variants=tuple(variants),
        pairs=tuple(pairs),
        interactions=interactions,
        repository=repository,
    )


def _unique(labels: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label}.{seen[label]}")
    return out


def _comparisons(count: int) -> str:
    return f"{count} comparison" if count == 1 else f"{count} comparisons"


def budget_plan(experiment: Experiment) -> str:
    """How one budget is shared, said before measuring."""
    settings = experiment.settings
    n = len(experiment.variants)
    # the wall-time lens samples until its share is used; the others measure once
    timed = [m for m in settings.metrics if m in wall_time_metrics()]
    others = [m.value for m in settings.metrics if m not in timed]
    text = (
        f"{n} variants measured together, interleaved, in one experiment "
        f"({_comparisons(len(experiment.comparison_pairs))}); the budget of "
        f"{settings.budget_s:g} s per benchmark is shared by all of them and every lens (a "
        "target: minimums that need more take more, with a warning)"
    )
    for metric in timed:
        text += (
            f"; the {metric} lens samples them in turn, at most about "
            f"{settings.budget_s / n:.1f} s per variant"
        )
    if others:
        text += f"; {', '.join(others)}: every variant once per benchmark"
    return text


# ---- experiment files and the API


DESIGN_KEYS = ("build", "stack", "matrix")
# what every variant of a stack or matrix may share: the fields the design does not set
_TEMPLATE_KEYS = tuple(f.name for f in VARIANT_FIELDS if not f.prepares)


def template_from(raw: Mapping[str, Any], where: str) -> Variant | None:
    """The variant keys every variant of a stack or matrix gets (python, cwd, cmd, env)."""
    keys = {k: raw[k] for k in _TEMPLATE_KEYS if k in raw}
    if not keys:
        return None
    env = keys.pop("env", {})
    if not isinstance(env, dict):
        raise ConfigError(f"{where}: env must be a table of strings")
    texts: dict[str, Any] = {k: str(v) for k, v in keys.items()}
    return Variant(name="each", env={str(k): str(v) for k, v in env.items()}, **texts)


def design_from_mapping(
    data: Mapping[str, Any],
    *,
    source: str,
    base_dir: Path | None,
    runner: ProcessRunner | None = None,
) -> Design | None:
    """`[stack] range = "A..B"` or `[matrix] base = [...], change = [...]` of an experiment
    file (with optional python, cwd, cmd, env for every variant); None when neither is there.
    `runner` asks git (None: the real one)."""
    if "stack" in data and "matrix" in data:
        raise ConfigError(f"{source}: an experiment is a [stack] or a [matrix], not both")
    if ("stack" in data or "matrix" in data) and "variant" in data:
        raise ConfigError(
            f"{source}: [stack] and [matrix] make the variants; [[variant]] cannot be added",
            hint="put keys every variant needs (python, cwd, cmd, env) in the [stack]/[matrix]",
        )
    git = _Git(runner or SubprocessRunner(), str(base_dir) if base_dir is not None else os.getcwd())
    if "stack" in data:
        return _stack_from(data["stack"], f"{source}: [stack]", git)
    if "matrix" in data:
        return _matrix_from(data["matrix"], f"{source}: [matrix]", git, base_dir)
    return None


@dataclass(frozen=True)
class _Git:
    """Where a design's refs are resolved: through `runner`, in the repository of `start`
    (looked up once the design's table is checked)."""

    runner: ProcessRunner
    start: str

    def repository(self) -> str:
        return find_repository(self.runner, self.start)


def _stack_from(raw: Any, where: str, git: _Git) -> Design:
    if not isinstance(raw, dict) or not isinstance(raw.get("range"), str):
        raise ConfigError(f'{where} needs range = "A..B"', hint='e.g. range = "main..HEAD"')
    _no_unknown(raw, {"range", "first_parent", *_TEMPLATE_KEYS}, where)
    first_parent = raw.get("first_parent")
    if first_parent is not None and not isinstance(first_parent, bool):
        raise ConfigError(f"{where}: first_parent must be true or false")
    return plan_stack(
        raw["range"],
        runner=git.runner,
        repository=git.repository(),
        template=template_from(raw, where),
        first_parent=first_parent,
    )


def _matrix_from(raw: Any, where: str, git: _Git, base_dir: Path | None) -> Design:
    """Change files are relative to the experiment file, when there is one."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be a table")
    _no_unknown(raw, {"base", "change", *_TEMPLATE_KEYS}, where)
    bases = [str(b) for b in _list(raw.get("base"), where, "base")]
    changes = []
    for change in _list(raw.get("change"), where, "change"):
        in_dir = base_dir / str(change) if base_dir is not None else None
        changes.append(str(in_dir) if in_dir is not None and in_dir.is_file() else str(change))
    return plan_matrix(
        bases,
        changes,
        runner=git.runner,
        repository=git.repository(),
        template=template_from(raw, where),
    )


def _list(value: Any, where: str, key: str) -> list[Any]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not value:
        raise ConfigError(f"{where}: {key} must be a list of refs or patch files")
    return value


def _no_unknown(raw: Mapping[str, Any], allowed: set[str], where: str) -> None:
    unknown = set(raw) - allowed
    if unknown:
        raise ConfigError(
            f"{where}: unknown key(s) {', '.join(sorted(unknown))}",
            hint="allowed: " + ", ".join(sorted(allowed)),
        )


def with_design(
    experiment: Experiment,
    design: Design | None,
    *,
    build: str | None,
    start: str | Path | None = None,
    runner: ProcessRunner | None = None,
) -> Experiment:
    """The experiment with the design's comparisons, `build` for every variant without its own
    build=, and the repository of its git= variants (found through `runner`; None: the real
    one)."""
    variants = tuple(
        replace(v, build=v.build or build) if build else v for v in experiment.variants
    )
    repository = design.repository if design is not None else experiment.repository
    if repository is None and any(v.git for v in variants):
        repository = find_repository(runner or SubprocessRunner(), start or os.getcwd())
    shared = shared_install_notes(variants)
    if design is None:
        return replace(
            experiment,
            variants=variants,
            repository=repository,
            plan_notes=(*experiment.plan_notes, *shared),
        )
    return replace(
        experiment,
        variants=variants,
        pairs=design.pairs,
        stack=design.stack,
        interactions=design.interactions,
        repository=repository,
        plan_notes=(*design.notes, *shared),
    )


# a build that installs its checkout into an environment: pip's (or uv's) install of `.`,
# editable too, or the setup script's install; --target, --prefix and --root put it elsewhere
_INSTALLS_CHECKOUT = re.compile(
    r"\bpip3?\s+install(?:\s+-\S+)*\s+(?:-e\s+)?\.(?=$|[\s;&|)])|\bsetup\.py\s+install\b"
)
_INSTALLS_ELSEWHERE = re.compile(r"\s(?:-t|--target|--prefix|--root)(?:[\s=]|$)")


def shared_install_notes(variants: Sequence[Variant]) -> tuple[str, ...]:
    """A warning for variants that each install their build into the environment of one
    interpreter they share (`--build "pip install ."` without a python= of each checkout's
    own): that environment holds one build, the last installed, and every one of them
    measures it, so an A/B silently becomes an A/A."""
    groups: dict[tuple[str | None, str | None], list[Variant]] = {}
    for variant in variants:
        build = variant.build or ""
        if not _INSTALLS_CHECKOUT.search(build) or _INSTALLS_ELSEWHERE.search(build):
            continue
        python = variant.python
        if python is not None and not os.path.isabs(python) and variant.git:
            continue  # a relative python= is inside the variant's own checkout
        if variant.env.get("PYTHONPATH"):
            continue  # it imports from where its path says (env.PYTHONPATH=. : its checkout)
        where = variant.cwd if python is not None and not os.path.isabs(python) else None
        groups.setdefault((python, where), []).append(variant)
    notes = []
    for (python, _), sharing in groups.items():
        if len(sharing) < 2:
            continue
        names = ", ".join(repr(v.name) for v in sharing)
        interpreter = python or "the interpreter running perflab"
        notes.append(
            f"warning: variants {names} each install their build ({sharing[0].build!r}) but "
            f"all run {interpreter}, whose one environment holds one install of the project "
            "(the last there, if any): every one of them imports that same code; give each "
            "checkout an environment of its "
            'own: --build "python3 -m venv venv && venv/bin/pip install -q ." with '
            "python=venv/bin/python in each variant (docs/git.md)"
        )
    return tuple(notes)
