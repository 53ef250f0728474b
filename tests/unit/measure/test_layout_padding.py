"""Environment padding: one random draw per unit, the variants' strings equalised."""

from __future__ import annotations

import random

from perflab.lenses.time.artifacts import KIND_COMMAND_UNITS, command_batch_blocks, command_units_of
from perflab.lenses.time.commands import command_unit_blocks
from perflab.measure.layout import (
    LAYOUT_PADDING_VARIABLE,
    MAX_LAYOUT_PADDING,
    environment_bytes,
    equalise_padding,
    fixed_padding_target,
    padded_environments,
    padded_to,
    strings_bytes,
)
from perflab.records.kinds import Metric
from perflab.records.model import Artifact, BenchmarkData


def test_strings_bytes_counts_what_the_kernel_copies() -> None:
    assert strings_bytes({"A": "bc"}, ("ls", "-l")) == len("A=bc\0") + len("ls\0") + len("-l\0")
    assert strings_bytes({LAYOUT_PADDING_VARIABLE: "xxxx"}) == 0


def test_a_fixed_target_pads_every_environment_to_one_size_with_no_draw() -> None:
    small, large = {"A": "1"}, {"A": "1", "ATEN_CPU_CAPABILITY": "avx2"}
    target = fixed_padding_target([small, large])
    assert target % 256 == 0 and target == fixed_padding_target([large, small])
    assert environment_bytes(padded_to(small, target)) == target
    assert environment_bytes(padded_to(large, target)) == target
    # a padding the environment held is replaced, not added to
    assert padded_to(padded_to(small, target), target) == padded_to(small, target)


def test_padded_environments_end_at_the_same_size_and_change_per_draw() -> None:
    rng = random.Random(1)
    envs = [{"PWD": "/short"}, {"PWD": "/a/much/longer/directory"}]
    argvs = [("./prog",), ("./prog", "--flag")]
    draws = set()
    for _ in range(20):
        padded = padded_environments(envs, argvs, rng)
        sizes = [
            strings_bytes(env, argv) + len(env[LAYOUT_PADDING_VARIABLE])
            for env, argv in zip(padded, argvs, strict=True)
        ]
        assert sizes[0] == sizes[1]
        draws.add(len(padded[1][LAYOUT_PADDING_VARIABLE]))
        assert len(padded[1][LAYOUT_PADDING_VARIABLE]) < MAX_LAYOUT_PADDING
    assert len(draws) > 10


def test_equalise_padding_keeps_a_variants_own_padding() -> None:
    shared = "x" * 10
    extras = [{LAYOUT_PADDING_VARIABLE: shared}, {}]
    envs = [{"N": "1"}, {"N": "1000", LAYOUT_PADDING_VARIABLE: "mine"}]
    out = equalise_padding(extras, envs, [("python",), ("python",)])
    assert len(out[0][LAYOUT_PADDING_VARIABLE]) == 10 + 3
    assert out[1] == {}


def test_command_units_last_about_a_second_and_hold_whole_abba_pairs() -> None:
    assert command_unit_blocks(0.02, 1.0, 2) == 50
    assert command_unit_blocks(0.3, 1.0, 2) == 4  # 4 blocks, not 3: as many AB as BA
    assert command_unit_blocks(0.3, 1.0, 3) == 4
    assert command_unit_blocks(2.0, 1.0, 2) == 1
    assert command_unit_blocks(0.0, 1.0, 2) == 2


def test_analysis_uses_the_units_the_run_stored_and_batches_older_runs_as_before() -> None:
    stored = BenchmarkData(
        artifacts=(Artifact("b", "A", Metric.TIME, KIND_COMMAND_UNITS, '{"blocks_per_unit": 6}'),)
    )
    assert command_units_of(stored, 400) == 6
    assert command_units_of(BenchmarkData(), 400) == command_batch_blocks(400) == 40
