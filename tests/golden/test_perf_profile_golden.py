"""`perf script` / `perf evlist` outputs (captured here, or written in perf's format for bare metal)
parsed into samples, hot symbols, folded stacks and profile differences."""

from __future__ import annotations

from pathlib import Path

import pytest

from perflab.tool_output.perf_script import parse_evlist, parse_perf_script
from perflab.tool_output.profile_diff import AppearanceRule, diff_profiles
from perflab.tool_output.profile_stacks import (
    address_histogram,
    folded_stacks,
    hot_symbols,
    parse_folded,
    top_symbols,
)

DATA = Path(__file__).parent / "data" / "perf"


def read(name: str) -> str:
    return (DATA / name).read_text()


def test_python_dwarf_call_chains() -> None:
    samples = parse_perf_script(read("script_python_dwarf.txt"))
    assert len(samples) == 8
    first = samples[0]
    assert first.comm == "python" and first.pid == 5645 and first.event == "cpu-clock"
    assert first.period == 1001001
    assert first.symbol == "_PyEval_EvalFrameDefault"
    assert first.frames[0].offset == 0x3E64
    assert first.frames[0].ip == 0xFE9D4
    assert first.frames[0].object == "libpython3.11.so.1.0"
    assert first.frames[-1].symbol == "_start"
    summary = hot_symbols(samples)
    assert summary.total_samples == 8
    eval_loop = summary.share_of("_PyEval_EvalFrameDefault")
    assert eval_loop is not None and eval_loop.children_share == pytest.approx(1.0)
    assert summary.share_of("Py_BytesMain") is not None
    assert summary.objects[0].object == "libpython3.11.so.1.0"


def test_sample_without_call_chain_has_its_ip_on_the_header_line() -> None:
    samples = parse_perf_script(read("script_nocallchain_cpu_clock.txt"))
    assert len(samples) == 6
    assert samples[0].comm == "hot"
    assert samples[0].symbol == "cold_outer"
    assert samples[0].ip == 0x5567259771C7
    assert samples[0].dso == "/tmp/pl4/hot"
    assert address_histogram(samples, "cold_outer") == {0x53: 6}


def test_inlined_pseudo_frames_are_dropped() -> None:
    text = read("script_inlined_frames.txt")
    assert "(inlined)" in text
    samples = parse_perf_script(text)
    assert all(f.dso != "inlined" for s in samples for f in s.frames)
    kept = parse_perf_script(text, keep_inlined=True)
    assert sum(len(s.frames) for s in kept) > sum(len(s.frames) for s in samples)


def test_bare_metal_cpp_symbols_and_modifiers() -> None:
    samples = parse_perf_script(read("script_baremetal_cycles_cpp.txt"))
    assert [s.event for s in samples] == ["cycles:P"] * 4
    kernel = (
        "at::native::(anonymous namespace)::add_kernel(at::TensorIteratorBase&, c10::Scalar const&)"
    )
    assert samples[0].symbol == kernel
    assert samples[0].frames[0].object == "libtorch_cpu.so"
    assert samples[2].symbol == "[unknown] [unknown]"
    assert samples[3].dso == "[kernel.kallsyms]"
    summary = hot_symbols(samples)
    assert summary.symbols[0].name == kernel
    assert summary.symbols[0].self_share == pytest.approx(0.5)
    assert top_symbols(summary, limit=2) == [kernel, "clear_page_erms"]
    assert address_histogram(samples, kernel) == {0x4E: 1, 0x52: 1}


def test_folded_stacks_round_trip() -> None:
    samples = parse_perf_script(read("script_baremetal_cycles_cpp.txt"))
    folded = folded_stacks(samples)
    assert folded.splitlines()[0].startswith("libpython3.11.so.1.0`_PyEval_EvalFrameDefault;")
    assert all(line.rsplit(" ", 1)[1].isdigit() for line in folded.splitlines())
    again = hot_symbols(parse_folded(folded))
    assert again == hot_symbols(samples)


def test_diff_pairs_symbols_by_name_across_library_paths() -> None:
    before = parse_perf_script(read("script_baremetal_cycles_cpp.txt"))
    after_text = (
        read("script_baremetal_cycles_cpp.txt")
        .replace("/envs/after/", "/envs/before/")
        .replace("at::native::add_stub", "at::native::add_stub_outlined_helper")
    )
    after = parse_perf_script(after_text)
    loose = AppearanceRule(min_samples=2, max_chance=0.5)
    diff = diff_profiles(hot_symbols(before), hot_symbols(after), rule=loose)
    assert diff.appeared == (
        "at::native::add_stub_outlined_helper(at::TensorIteratorBase&, c10::Scalar const&)",
    )
    assert diff.disappeared == (
        "at::native::add_stub(at::TensorIteratorBase&, c10::Scalar const&)",
    )
    top = diff.symbols[0]
    assert top.baseline_share == pytest.approx(0.5) and top.variant_share == pytest.approx(0.5)
    assert top.object == "libtorch_cpu.so"


def test_evlist_shows_the_fallback_event() -> None:
    assert parse_evlist(read("evlist_fallback.txt")) == ["cpu-clock"]
    assert parse_evlist(read("evlist_fallback_F.txt")) == ["cpu-clock"]


def test_symbols_seen_in_too_few_samples_do_not_appear() -> None:
    before = parse_perf_script(read("script_baremetal_cycles_cpp.txt"))
    after = parse_perf_script(read("script_baremetal_cycles_cpp.txt").replace("add_stub", "other"))
    diff = diff_profiles(hot_symbols(before), hot_symbols(after))  # 2 samples < 20
    assert diff.appeared == () and diff.disappeared == ()
    assert {entry.name.split("(")[0] for entry in diff.unsettled} == {
        "at::native::add_stub",
        "at::native::other",
    }
    assert all(entry.more_samples > 0 for entry in diff.unsettled)
