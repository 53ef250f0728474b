"""Output checks, measured: what each variant computes (--check) or prints (--check-output).

Statements: a fresh worker per variant evaluates the expression after setup, runs the statement
for one calibrated sample, and evaluates it again. Commands: each variant's command runs twice,
its standard output kept. Either way, both values are stored as one artifact per variant
(metric `check`), compared later from the store (`engine.analyse_run`).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from perflab.errors import BenchmarkFailedError
from perflab.measure.commands import command_argv
from perflab.measure.lens import LensContext
from perflab.measure.worker_client import StatementWorker, interpreter_for, variant_environment
from perflab.model import Artifact, Benchmark, BenchmarkKind, Metric, Variant
from perflab.proc import LaunchSpec

CHECK = Metric("check")  # not a lens: the artifacts of the output checks
CHECK_ARTIFACT = "check_value"
_EXACT_CHARS = 4096  # as the worker: longer output is compared by its digest


def wanted(benchmark: Benchmark, context: LensContext) -> bool:
    settings = context.experiment.settings
    if benchmark.kind is BenchmarkKind.STATEMENT:
        return settings.check is not None
    return settings.check_output


def check_outputs(benchmark: Benchmark, context: LensContext) -> None:
    """Store each variant's output values; raise BenchmarkFailedError (naming the variant) when
    the expression raises or its value cannot be compared."""
    for variant in context.experiment.variants:
        context.progress.update(
            benchmark=benchmark.name,
            metric=CHECK,
            detail=f"checking the output of {variant.name}",
            fraction=0.0,
        )
        if benchmark.kind is BenchmarkKind.STATEMENT:
            values = _statement_values(benchmark, variant, context)
        else:
            values = _command_values(benchmark, variant, context)
        context.sink.add_artifact(
            Artifact(
                benchmark=benchmark.name,
                variant=variant.name,
                metric=CHECK,
                kind=CHECK_ARTIFACT,
                content=json.dumps(values),
            )
        )


def _evaluate(worker: StatementWorker, expression: str) -> Any:
    reply = worker.call({"op": "evaluate", "expr": expression})
    if not reply.get("ok"):
        raise worker.error(
            f"the --check expression {expression!r} failed",
            hint="--check takes a Python expression evaluated in the setup's names, e.g. "
            "'f(x)' or 'out.sum().item()'; its value must be comparable (number, string, "
            "bytes, list, array, tensor)",
            detail=str(reply.get("error", "")).rstrip() or None,
        )
    return reply["value"]


def _statement_values(
    benchmark: Benchmark, variant: Variant, context: LensContext
) -> dict[str, Any]:
    settings = context.experiment.settings
    assert settings.check is not None
    worker = StatementWorker(
        context.runner,
        benchmark,
        variant,
        interpreter=interpreter_for(variant, context.default_python),
        cpu=context.cpu,
        timeout_s=settings.sample_timeout_s,
    )
    try:
        after_setup = _evaluate(worker, settings.check)
        loops = worker.calibrate(int(settings.sample_target_ms * 1e6))
        worker.sample(loops)
        after_measuring = _evaluate(worker, settings.check)
    except BaseException:
        worker.kill()
        raise
    worker.close()
    return {
        "expression": settings.check,
        "after_setup": after_setup,
        "after_measuring": after_measuring,
    }


def _stdout_value(text: str) -> dict[str, Any]:
    encoded: dict[str, Any] = {"kind": "exact", "type": "stdout", "text": text}
    if len(text) > _EXACT_CHARS:
        encoded["text"] = text[:200]
        encoded["digest"] = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        encoded["length"] = len(text)
    return encoded


def _command_values(benchmark: Benchmark, variant: Variant, context: LensContext) -> dict[str, Any]:
    argv = command_argv(benchmark.command_for(variant))
    outputs = []
    for _ in range(2):
        completed = context.runner.run(
            LaunchSpec(argv=argv, env=variant_environment(variant), cwd=variant.cwd),
            timeout_s=context.experiment.settings.sample_timeout_s,
        )
        if not completed.ok:
            raise BenchmarkFailedError(
                f"the command {completed.describe_failure()} (run for --check-output)",
                hint="run it by hand in the variant's directory to see why",
                variant=variant.name,
                benchmark=benchmark.name,
                detail=completed.stderr.rstrip()[-2000:] or None,
            )
        outputs.append(_stdout_value(completed.stdout))
    return {"expression": "stdout", "after_setup": outputs[0], "after_measuring": outputs[1]}
