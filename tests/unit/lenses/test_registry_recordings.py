"""Which lenses share a statement's perf recording, and how each reads it, is their descriptors'
word (`Planning.shares_recording`): measure/perf and the cost models are told, never named."""

from perflab.budget.perf_costs import Reading
from perflab.lenses.registry import recording_readers, shared_recordings
from perflab.records.kinds import BenchmarkKind, Metric

STATEMENT = BenchmarkKind.STATEMENT
BOTH = (Metric.ASM, Metric.TIME, Metric.PROFILE)  # in any order of --metric


def test_a_statement_s_recording_is_read_by_every_lens_sharing_it_in_the_listed_order() -> None:
    readers = {Metric.PROFILE: Reading.CALL_GRAPHS, Metric.ASM: Reading.LEAVES}
    for metric in (Metric.PROFILE, Metric.ASM):
        # whichever lens asks: the same readers, the same first (whose schedule it is)
        found = recording_readers(metric, BOTH, STATEMENT)
        assert found == readers and list(found) == list(readers)


def test_a_lens_alone_or_a_command_reads_its_own() -> None:
    assert recording_readers(Metric.ASM, (Metric.ASM,), STATEMENT) == {Metric.ASM: Reading.LEAVES}
    command = recording_readers(Metric.PROFILE, BOTH, BenchmarkKind.COMMAND)
    assert command == {Metric.PROFILE: Reading.CALL_GRAPHS}
    assert recording_readers(Metric.TIME, BOTH, STATEMENT) == {}  # it shares none


def test_a_recording_is_shared_where_two_of_the_run_s_lenses_read_it() -> None:
    (name,) = shared_recordings(BOTH)
    assert name and shared_recordings((Metric.PROFILE, Metric.TIME)) == frozenset()
