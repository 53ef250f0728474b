"""Running one corpus case: build it, check its ground truth, run perflab (the public Python
API, lenses instructions/asm/profile), and score every claim."""

from __future__ import annotations

import json
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import perflab
from perflab.report.json_report import run_to_json
from perflab.tool_output.symbol_names import readable

from .cases import ROLES, Built, Case
from .scoring import Expect, Score, fold, not_run_claims, ran_names, score
from .truth import CaseInvalid, code_differs, demangle, hottest_in_region, hottest_symbols


@dataclass
class HottestCheck:
    """asm `functions[0]` against perf report's hottest symbols of each variant: any symbol
    with at least 80% of the top symbol's share counts (two near-equal symbols are both "what
    it spent most time in")."""

    kind: str
    expected: dict[str, list[str]]  # side -> perf report's hottest symbols
    got: dict[str, str | None]  # side -> functions[0]'s symbol

    @property
    def ok(self) -> bool:
        return all(
            self.got.get(side) is not None
            and fold(str(self.got[side])) in {fold(symbol) for symbol in symbols}
            for side, symbols in self.expected.items()
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "perf_report": self.expected,
            "asm_functions0": self.got,
            "ok": self.ok,
        }


@dataclass
class CaseResult:
    case: str
    covers: str
    evidence: list[str]
    perf_hottest: dict[str, list[tuple[str, float]]]
    scores: list[Score] = field(default_factory=list)
    hottest: list[HottestCheck] = field(default_factory=list)
    seconds: float = 0.0
    raw: dict[str, Any] = field(default_factory=dict)
    contract: list[str] = field(default_factory=list)  # JSON contract violations
    # per kind (A/B, A/A): the summary's causes' share of the difference (None: no cause named)
    accounted: dict[str, float | None] = field(default_factory=dict)
    causes: dict[str, int] = field(default_factory=dict)  # per kind: causes the summary named
    # per kind: claims about functions perf report sampled in neither variant
    not_run: dict[str, list[str]] = field(default_factory=dict)
    perf_sampled: dict[str, list[str]] = field(default_factory=dict)  # every symbol, per role

    def to_json(self, raw: bool = True) -> dict[str, Any]:
        out = {
            "case": self.case,
            "covers": self.covers,
            "evidence": self.evidence,
            "perf_hottest": self.perf_hottest,
            "scores": [s.to_json() for s in self.scores],
            "hottest": [h.to_json() for h in self.hottest],
            "seconds": round(self.seconds, 1),
            "contract": self.contract,
            "accounted": self.accounted,
            "causes": self.causes,
            "not_run": self.not_run,
            "perf_sampled": self.perf_sampled,
        }
        if raw:
            out["perflab"] = self.raw
        return out

    def false_claims(self) -> list[str]:
        return [f"{s.kind} {claim}" for s in self.scores for claim in s.false]

    def missed_claims(self) -> list[str]:
        return [f"{s.kind} {claim}" for s in self.scores for claim in s.missed]


def run_case(
    case: Case, workdir: Path, budget_s: float = 2.0, metrics: tuple[str, ...] | None = None
) -> CaseResult:
    """`metrics`: the lenses to run (default: the case's); the others are not scored."""
    started = time.monotonic()
    metrics = metrics or case.metrics
    built = case.build(workdir)
    evidence = case.check(built)
    perf_hottest = _perf_truth(built, workdir)
    ran = {role: ran_names(name for name, _ in rows) for role, rows in perf_hottest.items()}
    sampled = {role: sorted(name for name, _ in rows) for role, rows in perf_hottest.items()}
    perf_hottest = {role: rows[:3] for role, rows in perf_hottest.items()}
    for role in ROLES:
        top = perf_hottest[role]
        want = case.hottest.get(role)
        if want and not (re.fullmatch(want, top[0][0]) or re.fullmatch(want, fold(top[0][0]))):
            raise CaseInvalid(f"perf report: {role} spent most time in {top[0][0]}, not {want}")
        evidence.append(f"perf report: {role} hottest {top[0][0]} ({top[0][1]:.1f}%)")
    if built.objects["base"] != built.objects["change"]:
        changed = code_differs(built.objects["base"], built.objects["change"])
        built.tolerated.extend(
            Expect("asm", ("code_changed",), re.escape(fold(demangle(name)))) for name in changed
        )
        evidence.append(f"objdump: code differs in {', '.join(changed) or 'no common function'}")
    experiment = perflab.make_experiment(
        stmt=built.stmt,
        setup=built.setup if built.stmt is not None else None,
        cmd=built.cmd,
        name=case.name,
        variants=list(built.variants),
        metrics=",".join(metrics),
        budget_s=budget_s,
        seed=1,
    )
    result = run_to_json(perflab.run(experiment, store_path=None))
    result = json.loads(json.dumps(result, default=str))
    out = CaseResult(case.name, case.covers, evidence, perf_hottest, raw=result)
    out.perf_sampled = sampled
    by_key = {
        (c["metric"], c["variant"]): c for c in result["comparisons"] if c.get("event") is None
    }
    for lens in metrics:
        for variant, kind in (("change", "A/B"), ("same", "A/A")):
            comparison = by_key.get((lens, variant))
            expected = case.expected if kind == "A/B" else ()
            tolerated = (*case.tolerated, *built.tolerated) if kind == "A/B" else ()
            out.scores.append(score(case.name, kind, lens, comparison, expected, tolerated))
    out.contract = contract_problems(result["comparisons"])
    for variant, kind in (("change", "A/B"), ("same", "A/A")):
        mine = [c for c in result["comparisons"] if c["variant"] == variant]
        out.not_run[kind] = not_run_claims(mine, ran["base"] | ran[variant])
        summary = next(
            (s["summary"] for s in result.get("summaries") or [] if s["variant"] == variant), None
        )
        if summary is not None:
            out.accounted[kind] = summary.get("accounted_share")
            out.causes[kind] = len(summary.get("causes") or [])
    for variant, kind in (("change", "A/B"), ("same", "A/A")):
        comparison = by_key.get(("asm", variant))
        if comparison is None:
            continue
        rows = comparison.get("functions") or []
        first = rows[0] if rows else {}
        got = {
            side: _readable((first.get(side) or {}).get("symbol"))
            for side in ("baseline", "variant")
        }
        expected = {
            "baseline": _near_top(perf_hottest["base"]),
            "variant": _near_top(perf_hottest[variant]),
        }
        out.hottest.append(HottestCheck(kind, expected, got))
    out.seconds = time.monotonic() - started
    return out


def _perf_truth(built: Built, workdir: Path) -> dict[str, list[tuple[str, float]]]:
    """perf report's hottest symbols of each role, the roles recorded side by side: each perf
    record samples its own process only (cpu-clock), so sharing the CPUs changes how many
    samples it takes, not which symbol is hottest (glibc_strlen_tunables: 8.2 s one after
    another, 3.5 s side by side, the same hottest symbols)."""
    measure = hottest_in_region if built.stmt is not None else hottest_symbols

    def one(role: str) -> list[tuple[str, float]]:
        folder = workdir / f"truth-{role}"  # the roles of a statement case share one argv
        folder.mkdir(exist_ok=True)
        # every sampled symbol: the hottest for the check, all of them for "did it run"
        return measure(built.argv[role], built.env[role], str(workdir), folder, top=100_000)

    with ThreadPoolExecutor(max_workers=len(ROLES)) as pool:
        return dict(zip(ROLES, pool.map(one, ROLES), strict=True))


def _readable(symbol: str | None) -> str | None:
    # perf report prints demangled names, Rust's without their hash
    return None if symbol is None else readable(demangle(symbol))


def _near_top(rows: list[tuple[str, float]]) -> list[str]:
    return [name for name, share in rows if share >= 0.8 * rows[0][1]]


def contract_problems(comparisons: list[dict[str, Any]]) -> list[str]:
    """The shared schema's promises: `inlining_changes` lists exactly the inlined/outlined facts
    of `diagnoses`; asm rows keep their `baseline`/`variant` objects."""
    problems = []
    for c in comparisons:
        where = f"{c['metric']} {c['variant']}"
        if c["metric"] == "instructions" and "diagnoses" in c:
            listed = {(x["function"], x["change"]) for x in c.get("inlining_changes") or []}
            claimed = {
                (d["function"], d["claim"])
                for d in c["diagnoses"]
                if d["claim"] in ("inlined", "outlined")
            }
            if listed != claimed:
                problems.append(f"{where}: inlining_changes {listed} != diagnoses {claimed}")
        if c["metric"] == "asm":
            for row in c.get("functions") or []:
                if "baseline" not in row or "variant" not in row:
                    problems.append(f"{where}: row {row.get('name')} lacks baseline/variant")
        for d in c.get("diagnoses") or []:
            if not d.get("evidence"):
                problems.append(f"{where}: {d.get('claim')} {d.get('function')} has no evidence")
    return problems
