"""Output checks, measured: what each variant computes (--check) or prints (--check-output).

Statements: a fresh worker per variant evaluates the expression after setup, runs the statement
for one calibrated sample, and evaluates it again; a second fresh worker evaluates it after
setup once more (the same variant in another process must compute the same value). Commands:
each variant's command runs twice, its standard output kept (or, with --check-output FILE, the
file it wrote). The values are stored as one artifact per variant (metric `check`), compared
later from the store (`analyse.run.analyse_run`).
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from perflab.machine.proc import LaunchSpec
from perflab.measure.commands import command_argv
from perflab.measure.lens import LensContext
from perflab.measure.worker_client import (
    StatementWorker,
    WorkerLaunch,
    interpreter_for,
    variant_environment,
)
from perflab.records.errors import BenchmarkFailedError, VariantsFailed
from perflab.records.kinds import ArtifactScope, BenchmarkKind
from perflab.records.model import Artifact, Benchmark, Variant
from perflab.stats.outputs import CHECK_ARTIFACT

_EXACT_CHARS = 4096  # as the worker: longer output is compared by its digest


def wanted(benchmark: Benchmark, context: LensContext) -> bool:
    settings = context.experiment.settings
    if benchmark.kind is BenchmarkKind.STATEMENT:
        return settings.check is not None
    return settings.check_output or settings.check_output_file is not None


def check_outputs(benchmark: Benchmark, context: LensContext) -> None:
    """Store each variant's output values; raise BenchmarkFailedError (naming the variant) when
    the expression raises or its value cannot be compared, or the command fails: where only some
    variants fail, once the others are checked (VariantsFailed), so that they are measured on."""
    variants = context.experiment.variants
    failed: list[BenchmarkFailedError] = []
    for variant in variants:
        try:
            _check_one(benchmark, variant, context)
        except BenchmarkFailedError as error:
            if len(variants) < 2 or error.variant is None:
                raise
            failed.append(error)
    if len(failed) == len(variants):  # none checks: the benchmark's own failure
        raise failed[0]
    if failed:
        raise VariantsFailed(failed)


def _check_one(benchmark: Benchmark, variant: Variant, context: LensContext) -> None:
    context.progress.update(
        benchmark=benchmark.name,
        metric=ArtifactScope.OUTPUT_CHECK,
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
            metric=ArtifactScope.OUTPUT_CHECK,
            kind=CHECK_ARTIFACT,
            content=json.dumps(values),
        )
    )


def _evaluate(worker: StatementWorker, expression: str) -> Any:
    reply = worker.call({"op": "evaluate", "expr": expression})
    if not reply.get("ok") and reply.get("uncomparable"):
        raise worker.error(
            f"the value of the --check expression {expression!r} cannot be compared across "
            "processes",
            hint="--check needs a value with a stable content: a number, string, bytes, "
            "list, NumPy array or torch tensor (or an object whose repr shows its content)",
            detail=str(reply.get("error", "")).rstrip() or None,
        )
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
    """The value after setup and after one measured sample in one worker, and after setup in a
    second worker: a value drawn from unseeded randomness (torch.randn, random.random, a set's
    order under another hash seed) differs between processes of the same variant, and would
    otherwise look like a variant computing something else."""
    settings = context.experiment.settings
    assert settings.check is not None
    values: dict[str, Any] = {"expression": settings.check}
    for process in ("first", "second"):
        worker = StatementWorker.start(
            context.runner,
            benchmark,
            variant,
            WorkerLaunch(
                interpreter_for(variant, context.default_python),
                cpu=context.cpu,
                timeout_s=settings.sample_timeout_s,
            ),
        )
        try:
            if process == "first":
                values["after_setup"] = _evaluate(worker, settings.check)
                loops = worker.calibrate(int(settings.sample_target_ms * 1e6))
                worker.sample(loops)
                values["after_measuring"] = _evaluate(worker, settings.check)
            else:
                values["another_process"] = _evaluate(worker, settings.check)
        except BaseException:
            worker.kill()
            raise
        worker.close()
    return values


def _text_value(text: str, source: str) -> dict[str, Any]:
    encoded: dict[str, Any] = {"kind": "exact", "type": source, "text": text}
    if len(text) > _EXACT_CHARS:
        encoded["text"] = text[:200]
        encoded["digest"] = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        encoded["length"] = len(text)
    return encoded


def _file_value(content: bytes) -> dict[str, Any]:
    """A file's content as a check value: its text when it is UTF-8, else its bytes in hex
    (both digested when long)."""
    try:
        return _text_value(content.decode("utf-8"), "file")
    except UnicodeDecodeError:
        return _text_value(content.hex(), "file (bytes, in hex)")


def _file_state(path: str) -> tuple[int, int, int] | None:
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return None
    return (stat.st_ino, stat.st_mtime_ns, stat.st_size)


def _command_values(benchmark: Benchmark, variant: Variant, context: LensContext) -> dict[str, Any]:
    argv = command_argv(benchmark.command_for(variant), shell=context.experiment.settings.shell)
    settings = context.experiment.settings
    written = settings.check_output_file
    path = os.path.join(variant.cwd or ".", written) if written is not None else None
    outputs = []
    for _ in range(2):
        before = _file_state(path) if path is not None else None
        completed = context.runner.run(
            LaunchSpec(argv=argv, env=variant_environment(variant), cwd=variant.cwd),
            timeout_s=settings.sample_timeout_s,
        )
        if not completed.ok:
            raise BenchmarkFailedError(
                f"the command {completed.describe_failure()} (run for --check-output)",
                hint="run it by hand in the variant's directory to see why",
                variant=variant.name,
                benchmark=benchmark.name,
                detail=completed.stderr.rstrip()[-2000:] or None,
            )
        if path is None:
            outputs.append(_text_value(completed.stdout, "stdout"))
            continue
        after = _file_state(path)
        if after is None or after == before:
            raise BenchmarkFailedError(
                f"the command did not write {written!r} (--check-output FILE): "
                + ("the file does not exist" if after is None else "the file did not change"),
                hint="name the file the command writes, relative to the variant's cwd "
                f"({variant.cwd or 'the current directory'}); without FILE, --check-output "
                "compares what the command prints",
                variant=variant.name,
                benchmark=benchmark.name,
            )
        with open(path, "rb") as file:
            outputs.append(_file_value(file.read()))
    expression = "stdout" if written is None else f"file {written}"
    return {"expression": expression, "after_setup": outputs[0], "after_measuring": outputs[1]}
