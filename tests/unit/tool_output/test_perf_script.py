"""`perf script` and `perf evlist` text parsed (tool_output/perf_script.py) on lines written
here in the format perflab asks for: headers, call chains leaf first, unresolved frames, inlined
pseudo-frames, side-band records. Real perf output is read in tests/golden/."""

from __future__ import annotations

from perflab.tool_output.perf_script import (
    UNKNOWN,
    Frame,
    executable_mappings,
    object_file_name,
    parse_evlist,
    parse_perf_script,
)

CHAIN = """\
python  5645/5646    550.900275:    1001001 cpu-clock:
\t          16e040 __memset_avx512_unaligned_erms+0x10 (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t          19513d std::vector<int, std::allocator<int> >::push_back(int const&)+0xdd (/opt/a.so)
\t          1a0000 helper (inlined)
\t               0 [unknown] ([unknown])

python  5645/5645    550.901000:    2002 cycles:
\t          19513d new_keys_object+0xdd (/usr/lib/libpython3.11.so.1.0)
"""


def test_a_call_chain_is_the_sample_leaf_first() -> None:
    first, second = parse_perf_script(CHAIN)
    assert (first.comm, first.pid, first.tid, first.period, first.event) == (
        "python",
        5645,
        5646,
        1001001,
        "cpu-clock",
    )
    assert first.time_s == 550.900275
    assert first.leaf == Frame(
        0x16E040, "__memset_avx512_unaligned_erms", 0x10, "/usr/lib/x86_64-linux-gnu/libc.so.6"
    )
    assert first.ip == 0x16E040 and first.dso.endswith("libc.so.6")
    # a C++ symbol's own parentheses are not its object
    assert first.frames[1].symbol == "std::vector<int, std::allocator<int> >::push_back(int const&)"
    assert first.frames[1].object == "a.so"
    # perf's inlined pseudo-frame has no address of its own: left out unless asked for
    assert len(first.frames) == 3 and first.frames[2].symbol == f"{UNKNOWN} {UNKNOWN}"
    assert len(parse_perf_script(CHAIN, keep_inlined=True)[0].frames) == 4
    assert (second.event, second.period, second.symbol) == ("cycles", 2002, "new_keys_object")


def test_a_sample_without_a_call_graph_has_its_frame_on_the_header() -> None:
    (sample,) = parse_perf_script(
        "prog 10/10 1.500000: 1 cpu-clock:  4005d0 kernel+0x4 (/tmp/prog)\n"
    )
    assert sample.leaf == Frame(0x4005D0, "kernel", 4, "/tmp/prog")
    (bare,) = parse_perf_script("prog 10/10 1.500000: cpu-clock:\n")
    assert bare.period == 1 and bare.frames == () and bare.symbol == UNKNOWN and bare.ip is None


def test_side_band_records_and_noise_are_not_samples() -> None:
    text = (
        "Warning: some events were lost\n"
        "python 5645/5645 550.900100: PERF_RECORD_MMAP2 5645/5645: [0x7f(0x1000) @ 0 08:01 1 0]:"
        " r-xp /usr/lib/libc.so.6\n"
        "\t 123 stray (/x)\n" + CHAIN
    )
    assert len(parse_perf_script(text)) == 2


def test_executable_mappings_are_files_mapped_to_run_in_the_order_seen() -> None:
    line = "python 1/1 0.1: PERF_RECORD_MMAP2 1/1: [0x7f(0x1000) @ 0 08:01 1 0]: {} {}\n"
    text = "".join(
        line.format(perms, path)
        for perms, path in [
            ("r-xp", "/usr/lib/libc.so.6"),
            ("r--p", "/usr/lib/data.bin"),
            ("r-xp", "[vdso]"),
            ("r-xp", "/opt/numpy/_core.so"),
            ("r-xp", "/usr/lib/libc.so.6"),
        ]
    )
    assert executable_mappings(text) == ("/usr/lib/libc.so.6", "/opt/numpy/_core.so")


def test_object_names_drop_the_directory_but_not_a_pseudo_objects_brackets() -> None:
    assert object_file_name("/usr/lib/libc.so.6") == "libc.so.6"
    assert object_file_name("[kernel.kallsyms]") == "[kernel.kallsyms]"


def test_evlist_names_the_events_but_perfs_own_dummy() -> None:
    text = "# captured\ncycles\ninstructions: type=0, config=1\ndummy:u\n\nL1-dcache-load-misses\n"
    assert parse_evlist(text) == ["cycles", "instructions", "L1-dcache-load-misses"]
