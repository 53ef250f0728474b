"""valgrind's driver: callgrind's and vgdb's command lines, the host's AVX-512, and valgrind's
words when it meets code it cannot execute."""

from __future__ import annotations

from perflab.records.errors import BenchmarkFailedError
from perflab.tool_drivers.valgrind import (
    CACHE_GEOMETRY,
    CallgrindOptions,
    cannot_execute,
    cpu_has_avx512,
    vgdb_argv,
)


def test_callgrind_options_switch_on_only_what_is_asked() -> None:
    statement = CallgrindOptions(
        out_file="/t/out.%p",
        instr_at_start=False,
        vgdb_prefix="/t/vgdb",
        cache_sim=False,
        dump_instr=False,
        region=None,
        trace_children=False,
    ).argv()
    assert "--instr-atstart=no" in statement
    assert "--vgdb-prefix=/t/vgdb" in statement
    assert not any(o.startswith("--cache-sim") for o in statement)
    command = CallgrindOptions(
        out_file="/t/out.%p",
        instr_at_start=True,
        vgdb_prefix=None,
        cache_sim=True,
        dump_instr=True,
        region="kernel",
        trace_children=True,
    ).argv()
    assert {"--cache-sim=yes", "--branch-sim=yes", "--dump-instr=yes", "--vgdb=no"} <= set(command)
    assert f"--D1={CACHE_GEOMETRY['D1']}" in command
    region = {"--toggle-collect=kernel", "--collect-atstart=no", "--trace-children=yes"}
    assert region <= set(command)


def test_avx512_is_recognised_in_cpuinfo() -> None:
    assert cpu_has_avx512("processor : 0\nflags : fpu sse avx2 avx512f avx512bw\n")
    assert not cpu_has_avx512("processor : 0\nflags : fpu sse avx2\n")


def test_valgrind_s_words_for_code_it_cannot_execute() -> None:
    detail = "==1== Process terminating with default action of signal 4 (SIGILL)\n"
    detail += "==1==  Illegal opcode at address 0x109172\n==1==    at 0x109172: main"
    error = BenchmarkFailedError(
        "the command exited with status 132 under callgrind", detail=detail
    )
    assert cannot_execute(error) == "Illegal opcode at address 0x109172"
    loud = BenchmarkFailedError("x", detail="vex amd64->IR: unhandled instruction bytes: 0x62 0xF1")
    assert cannot_execute(loud) == "unhandled instruction bytes: 0x62 0xF1"
    assert cannot_execute(BenchmarkFailedError("the statement raised", detail="ValueError")) is None
    # a Python worker's fault handler takes the signal, and valgrind (--quiet) says nothing
    silent = BenchmarkFailedError(
        "the worker process was killed by signal 4 (SIGILL)",
        detail="Fatal Python error: Illegal instruction",
    )
    assert (cannot_execute(silent) or "").startswith("SIGILL")


def test_a_command_runs_under_valgrind_with_its_options_then_more_then_the_program() -> None:
    options = CallgrindOptions(
        out_file="o", instr_at_start=True, vgdb_prefix=None, cache_sim=False, dump_instr=False
    )
    command = options.command("./bench", "-n", more=("--dump-before=loop",))
    assert command == ("valgrind", *options.argv(), "--dump-before=loop", "./bench", "-n")


def test_vgdb_sends_every_command_to_one_process_each_after_a_c() -> None:
    argv = vgdb_argv("/t/vgdb", 42, [("instrumentation", "off"), ("dump", "loop")])
    assert argv[:3] == ("vgdb", "--vgdb-prefix=/t/vgdb", "--pid=42")
    assert argv[4:] == ("instrumentation", "off", "-c", "dump", "loop")
