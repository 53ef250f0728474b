import random

from perflab.stats import noise


def test_drift_is_found_when_the_machine_slows_down() -> None:
    times = list(range(100))
    values = [100 * (1 + 0.002 * t) for t in times]
    finding = noise.drift_finding(times, values)
    assert finding is not None and "slower" in finding.message
    assert noise.drift_finding(times, [100.0] * 100) is None


def test_outliers_and_bimodality() -> None:
    rng = random.Random(3)
    steady = [100 * (1 + rng.gauss(0, 0.01)) for _ in range(200)]
    assert noise.outlier_finding(steady) is None
    assert noise.bimodality_finding(steady) is None
    spiky = steady[:190] + [400.0] * 10
    assert noise.outlier_finding(spiky) is not None
    two_speeds = [100 * (1 + rng.gauss(0, 0.01)) for _ in range(100)] + [
        160 * (1 + rng.gauss(0, 0.01)) for _ in range(100)
    ]
    assert noise.bimodality_finding(two_speeds) is not None


def test_migration_against_the_pinned_cpu() -> None:
    assert noise.migration_finding([1, 1, 1], 1) is None
    assert noise.migration_finding([1, 0, 1], 1) is not None
    assert noise.migration_finding([0, 1], None) is not None
    assert noise.migration_finding([None, None], 1) is None


def test_a_finding_names_its_kind_by_its_old_string() -> None:
    finding = noise.migration_finding([1, 0, 1], 1)
    assert finding is not None and finding.kind is noise.NoiseKind.MIGRATION
    assert finding.kind == "migration"
