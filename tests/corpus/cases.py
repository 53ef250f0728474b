"""The known-answer cases: each builds real code on the spot (three variants: the baseline,
the change, and a byte-identical copy of the baseline for the A/A), checks its ground truth
with nm/objdump/readelf/perf, and says which claims each lens should make about the A/B.

The A/A (baseline against its copy) expects no claim at all. `tolerated` lists true incidental
claims (a helper that is outlined also "appeared"); any other claim counts as false."""

from __future__ import annotations

import filecmp
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from perflab.records.model import Variant

from . import sources
from .scoring import Expect, fold
from .truth import (
    CaseInvalid,
    calls_in,
    code_differs,
    debug_file_for,
    demangle,
    has_symbols,
    inlined_subroutines,
    statement_argv,
    text_symbols,
    vector_width,
)

ROLES = ("base", "change", "same")  # baseline, the A/B's variant, the A/A's variant
EXPLAIN = ("instructions", "asm", "profile")


def has_avx512() -> bool:
    return "avx512f" in Path("/proc/cpuinfo").read_text()


def has_avx2() -> bool:
    return " avx2" in Path("/proc/cpuinfo").read_text()


@dataclass(frozen=True)
class Built:
    """A case built in a directory: what perflab measures and what the ground truth reads."""

    name: str
    variants: tuple[Variant, Variant, Variant]
    objects: dict[str, Path]  # role -> the object whose code the case is about
    argv: dict[str, list[str]]  # role -> one process doing the benchmark's work (for perf)
    env: dict[str, dict[str, str]]
    stmt: str | None = None
    setup: str = "pass"
    cmd: str | None = None
    # true incidental facts the ground truth found while checking (e.g. a vector width change)
    tolerated: list[Expect] = field(default_factory=list)


@dataclass(frozen=True)
class Case:
    name: str
    covers: str
    build: Callable[[Path], Built]
    check: Callable[[Built], list[str]]  # evidence sentences; raises CaseInvalid
    expected: tuple[Expect, ...]
    tolerated: tuple[Expect, ...] = ()
    metrics: tuple[str, ...] = EXPLAIN
    needs: Callable[[], str | None] = lambda: None  # a reason to skip, or None
    reduced: bool = False  # part of the reduced corpus the test suite runs
    reduced_metrics: tuple[str, ...] | None = None  # the lenses it runs there (None: all)
    hottest: dict[str, str] = field(default_factory=dict)  # role -> perf's hottest symbol regex


def _compile(
    directory: Path, name: str, source: str, flags: list[str], *, cxx: bool = False,
    compiler: str | None = None, shared: bool = False, debug: bool = True,
) -> Path:  # fmt: skip
    suffix = ".cpp" if cxx else ".c"
    src = directory / f"{name}{suffix}"
    src.write_text(source)
    out = directory / (f"lib{name}.so" if shared else name)
    tool = compiler or ("g++" if cxx else "gcc")
    kind = ["-shared", "-fPIC"] if shared else []
    subprocess.run(
        [tool, *(["-g"] if debug else []), *flags, *kind, "-o", str(out), str(src)], check=True
    )
    return out


def _copy(path: Path, directory: Path, new_name: str) -> Path:
    out = directory / new_name
    shutil.copy2(path, out)
    return out


def command_case(
    name: str, source: str, base_flags: list[str], change_flags: list[str], *,
    cxx: bool = False, compiler: str | None = None, truth_args: tuple[str, ...] = ("20000",),
    debug: bool = True,
) -> Callable[[Path], Built]:  # fmt: skip
    """Two builds of one program and a byte-identical copy of the first, under other names (so
    pairing cannot lean on the file name). perf's ground truth runs each longer (`truth_args`:
    the repetitions) so it has enough samples."""

    def build(directory: Path) -> Built:
        def build_one(role: str, flags: list[str]) -> Path:
            return _compile(
                directory, f"{name}_{role}", source, flags, cxx=cxx, compiler=compiler, debug=debug
            )

        base, change = build_one("base", base_flags), build_one("change", change_flags)
        same = _copy(base, directory, f"{name}_same")
        paths = {"base": base, "change": change, "same": same}
        variants = tuple(Variant(role, cmd=str(paths[role])) for role in ROLES)
        return Built(
            name=name,
            variants=variants,  # type: ignore[arg-type]
            objects=paths,
            argv={role: [str(paths[role]), *truth_args] for role in ROLES},
            env={role: {} for role in ROLES},
            cmd=str(base),
        )

    return build


def rust_case(
    name: str, source: str, base_flags: list[str], change_flags: list[str], *, crate: str,
    truth_args: tuple[str, ...],
) -> Callable[[Path], Built]:  # fmt: skip
    """`command_case` for one Rust crate built twice: the same crate name, another `-C
    metadata` per build (as cargo does for builds with other flags); stable rustc mangles the
    crate's own functions the legacy way, the hash ending each symbol."""

    def build(directory: Path) -> Built:
        src = directory / f"{crate}.rs"
        src.write_text(source)

        def build_one(role: str, flags: list[str]) -> Path:
            out = directory / f"{name}_{role}"
            subprocess.run(
                ["rustc", "-g", "--crate-name", crate, "-C", f"metadata={role}", *flags,
                 "-o", str(out), str(src)],
                check=True,
            )  # fmt: skip
            return out

        base, change = build_one("base", base_flags), build_one("change", change_flags)
        same = _copy(base, directory, f"{name}_same")
        paths = {"base": base, "change": change, "same": same}
        return Built(
            name=name,
            variants=tuple(Variant(r, cmd=str(paths[r])) for r in ROLES),  # type: ignore[arg-type]
            objects=paths,
            argv={role: [str(paths[role]), *truth_args] for role in ROLES},
            env={role: {} for role in ROLES},
            cmd=str(base),
        )

    return build


LIB_SETUP = "import ctypes, os; lib = ctypes.CDLL(os.environ['CORPUS_LIB'])"


def _stmt_argv(setup: str, stmt: str, loops: int = 0) -> list[str]:
    return statement_argv(sys.executable, setup, stmt)


def library_case(
    name: str, source: str, base_flags: list[str], change_flags: list[str], stmt: str,
    *, env: dict[str, dict[str, str]] | None = None, loops: int = 2000,
) -> Callable[[Path], Built]:  # fmt: skip
    """A statement calling a shared library through ctypes; each variant loads its own build
    (or, with `env`, one build under other environment variables)."""

    def build(directory: Path) -> Built:
        base = _compile(directory, f"{name}_base", source, base_flags, shared=True)
        if change_flags == base_flags:
            change = base
        else:
            change = _compile(directory, f"{name}_change", source, change_flags, shared=True)
        same = _copy(base, directory, f"lib{name}_same.so")
        paths = {"base": base, "change": change, "same": same}
        envs = {r: {"CORPUS_LIB": str(paths[r]), **(env or {}).get(r, {})} for r in ROLES}
        return Built(
            name=name,
            variants=tuple(Variant(r, env=envs[r]) for r in ROLES),  # type: ignore[arg-type]
            objects=paths,
            argv={r: _stmt_argv(LIB_SETUP, stmt, loops) for r in ROLES},
            env=envs,
            stmt=stmt,
            setup=LIB_SETUP,
        )

    return build


# --- ground truth checks -----------------------------------------------------------------


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise CaseInvalid(message)


def _identical_copy(built: Built) -> str:
    _require(
        filecmp.cmp(built.objects["base"], built.objects["same"], shallow=False), "copy differs"
    )
    return f"cmp: {built.objects['same'].name} is byte-identical to {built.objects['base'].name}"


def outlining_truth(
    helper: str, caller: str, symbol: str | None = None
) -> Callable[[Built], list[str]]:
    """The helper is inlined into the caller in the baseline (DWARF) and an out-of-line copy
    called from it in the change (nm, objdump)."""

    def check(built: Built) -> list[str]:
        base, change = built.objects["base"], built.objects["change"]
        evidence = [_identical_copy(built)]
        _require(
            helper in inlined_subroutines(base), f"DWARF: {helper} not inlined in the baseline"
        )
        evidence.append(f"readelf: DW_TAG_inlined_subroutine {helper} in {base.name}")
        _require(
            helper not in inlined_subroutines(change), f"DWARF: {helper} inlined in the change"
        )
        names = text_symbols(change)
        defined = [
            s for s in names
            if (symbol and s.startswith(symbol)) or s == helper or s.startswith(helper + ".")
        ]  # fmt: skip
        _require(bool(defined), f"nm: no out-of-line {helper} in {change.name}")
        callers = [s for s in names if s.startswith(caller)]
        calls = {c for symbol_ in callers for c in calls_in(change, symbol_)}
        _require(any(c in defined for c in calls), f"objdump: {callers} do not call {defined}")
        evidence.append(
            f"nm: {', '.join(defined)} defined in {change.name}; "
            f"objdump: {', '.join(callers)} call it"
        )
        widths = [
            max(vector_width(path, s) for s in text_symbols(path) if s.startswith(caller))
            for path in (base, change)
        ]
        if widths[0] != widths[1]:  # e.g. clang vectorises the loop only with the helper inlined
            built.tolerated.append(
                Expect("asm", ("vector_width_changed",), f"(.*::)?{fold(caller)}.*")
            )
            evidence.append(f"objdump: {caller} vector width {widths[0]} -> {widths[1]} bits")
        return evidence

    return check


def no_debug_truth(helper: str, caller: str) -> Callable[[Built], list[str]]:
    def check(built: Built) -> list[str]:
        for role in ("base", "change"):
            out = subprocess.run(
                ["readelf", "-S", str(built.objects[role])], capture_output=True, text=True
            ).stdout
            _require(".debug_info" not in out, f"readelf: {role} has debug info")
        _require(helper in text_symbols(built.objects["change"]), f"nm: no {helper} in change")
        _require(helper not in text_symbols(built.objects["base"]), f"nm: {helper} in base")
        return [
            _identical_copy(built),
            f"readelf -S: no .debug_info in either build; nm: {helper} defined in change only",
        ]

    return check


def vector_truth(function: str, widths: tuple[int, int]) -> Callable[[Built], list[str]]:
    def width(path: Path) -> int:
        parts = [s for s in text_symbols(path) if fold(s) == function]
        return max(vector_width(path, s) for s in parts)

    def check(built: Built) -> list[str]:
        got = tuple(width(built.objects[r]) for r in ("base", "change"))
        _require(got == widths, f"objdump: {function} vector widths {got}, expected {widths}")
        return [
            _identical_copy(built),
            f"objdump: {function} uses {got[0]}-bit vectors in base, {got[1]}-bit in change",
        ]

    return check


def rust_hash_truth(function: str, widths: tuple[int, int]) -> Callable[[Built], list[str]]:
    """nm: the function is defined once in each build, its legacy hashes differ; objdump: its
    widest vectors are `widths`."""

    def symbol(path: Path) -> str:
        found = [s for s in text_symbols(path) if demangle(s).rsplit("::h", 1)[0] == function]
        _require(len(found) == 1, f"nm: {function} is not one symbol in {path.name}: {found}")
        return found[0]

    def check(built: Built) -> list[str]:
        base, change = (symbol(built.objects[r]) for r in ("base", "change"))
        _require(base != change, f"nm: {function} is spelled {base} in both builds")
        got = (
            vector_width(built.objects["base"], base),
            vector_width(built.objects["change"], change),
        )
        _require(got == widths, f"objdump: {function} vector widths {got}, expected {widths}")
        return [
            _identical_copy(built),
            f"nm: {demangle(base)} (base), {demangle(change)} (change)",
            f"objdump: {got[0]}-bit vectors in base, {got[1]}-bit in change",
        ]

    return check


def clones_truth(built: Built) -> list[str]:
    evidence = outlining_truth("weigh", "total")(built)
    for role in ("base", "change"):
        names = text_symbols(built.objects[role])
        for suffix in (".constprop.", ".part."):
            _require(any(suffix in n for n in names), f"nm: no {suffix} clone in {role}")
    change_names = text_symbols(built.objects["change"])
    _require(
        any(n.startswith("weigh.isra") or n.startswith("weigh.constprop") for n in change_names),
        "nm: weigh is not cloned",
    )
    clones = sorted(n for n in change_names if "." in n and not n.startswith((".", "_")))
    evidence.append("nm: clones and fragments " + ", ".join(clones))
    return evidence


def renamed_truth(built: Built) -> list[str]:
    base, change = (text_symbols(built.objects[r]) for r in ("base", "change"))
    _require("compute_v1" in base and "compute_v2" not in base, "nm: base")
    _require("compute_v2" in change and "compute_v1" not in change, "nm: change")
    _require(calls_in(built.objects["change"], "driver") == {"compute_v2"}, "objdump: driver")
    return [
        _identical_copy(built),
        "nm/objdump: driver calls compute_v1 in base, compute_v2 in change",
    ]


def ifunc_truth(built: Built) -> list[str]:
    names = text_symbols(built.objects["base"])
    _require(names.get("sum_ints") == "i", "nm: sum_ints is not an ifunc")
    _require({"sum_ints_sse2", "sum_ints_avx2"} <= set(names), "nm: versions missing")
    return [
        _identical_copy(built),
        "nm: sum_ints is an ifunc (i) over sum_ints_sse2 and sum_ints_avx2",
    ]


def target_clones_truth(built: Built) -> list[str]:
    names = text_symbols(built.objects["base"])
    _require(
        {"dot.avx2", "dot.default", "dot.resolver"} <= set(names), f"nm: clones {sorted(names)}"
    )
    changed = text_symbols(built.objects["change"])
    _require({"dot.sse4_2", "dot.default"} <= set(changed), f"nm: change clones {sorted(changed)}")
    return [
        _identical_copy(built),
        "nm: dot.avx2/dot.default (base), dot.sse4_2/dot.default (change)",
    ]


LIBC = Path("/lib/x86_64-linux-gnu/libc.so.6")


def libc_truth(built: Built) -> list[str]:
    _require(not has_symbols(LIBC), "libc.so.6 is not stripped")
    debug = debug_file_for(LIBC)
    _require(debug is not None, "no separate debug file for libc (install libc6-dbg)")
    assert debug is not None
    _require("__strlen_avx2" in text_symbols(debug), "the debug file has no __strlen_avx2")
    return [f"nm: {LIBC} has no symbols; readelf -n build-id -> {debug}"]


def torch_compile_truth(built: Built) -> list[str]:
    return ["torch.compile vs eager: hottest symbols from perf report (below)"]


def aten_truth(built: Built) -> list[str]:
    return ["ATEN_CPU_CAPABILITY=default vs avx2: hottest symbols from perf report (below)"]


# --- the cases ----------------------------------------------------------------------------

HELPER_NOINLINE = "-DHELPER=__attribute__((noinline))"


def _needs(*tools: str) -> Callable[[], str | None]:
    def check() -> str | None:
        missing = [t for t in tools if shutil.which(t) is None]
        return f"needs {', '.join(missing)}" if missing else None

    return check


def _needs_torch() -> str | None:
    try:
        import torch  # noqa: F401
    except ImportError:
        return "needs torch"
    return None


def _needs_avx512() -> str | None:
    return None if has_avx512() else "this CPU has no AVX-512 (/proc/cpuinfo: avx512f)"


def _outlined(helper: str, caller: str) -> tuple[tuple[Expect, ...], tuple[Expect, ...]]:
    expected = (
        Expect("instructions", ("outlined",), helper),
        Expect("asm", ("outlined", "callee_changed", "code_changed"), f"{caller}|{helper}"),
    )
    tolerated = tuple(Expect(lens, ("appeared",), helper) for lens in EXPLAIN) + (
        Expect("asm", ("outlined", "code_changed", "callee_changed"), f"{caller}|{helper}"),
        Expect("instructions", ("code_changed",), caller),
    )
    return expected, tolerated


def _dispatch(family: str) -> tuple[tuple[Expect, ...], tuple[Expect, ...]]:
    expected = (
        Expect("asm", ("dispatch_changed",), family),
        Expect("profile", ("dispatch_changed", "appeared", "disappeared"), family),
    )
    tolerated = tuple(
        Expect(lens, ("dispatch_changed", "appeared", "disappeared", "code_changed",
                      "vector_width_changed", "callee_changed"), family)
        for lens in EXPLAIN
    )  # fmt: skip
    return expected, tolerated


def _case_list() -> list[Case]:
    cases: list[Case] = []
    for compiler in ("gcc", "clang"):
        suffix = "" if compiler == "gcc" else "_clang"
        expected, tolerated = _outlined("helper", "kernel")
        cases.append(
            Case(
                f"inline_small{suffix}",
                f"a 3-instruction helper inlined vs noinline ({compiler} -O2 -g)",
                command_case(
                    f"inline_small{suffix}",
                    sources.INLINE_SMALL,
                    ["-O2"],
                    ["-O2", HELPER_NOINLINE],
                    compiler=compiler,
                    truth_args=("15000",),
                ),
                outlining_truth("helper", "kernel"),
                expected,
                tolerated,
                needs=_needs(compiler),
                reduced=compiler == "gcc",
                hottest={"base": "kernel", "change": "kernel|helper"},
            )
        )
    expected, tolerated = _outlined("mix", "hash_all")
    cases.append(
        Case(
            "inline_large",
            "a ~50-instruction helper always_inline vs noinline (gcc -O2 -g)",
            command_case(
                "inline_large",
                sources.INLINE_LARGE,
                ["-O2"],
                ["-O2", "-DHELPER=__attribute__((noinline))"],
                truth_args=("3000",),
            ),
            outlining_truth("mix", "hash_all"),
            expected,
            tolerated,
            hottest={"base": "hash_all", "change": "mix|hash_all"},
        )
    )
    cases.append(
        Case(
            "inline_small_no_debug_info",
            "the 3-instruction helper outlined, built without -g: no lens can show inlining, so "
            "none may claim it (it says it cannot tell)",
            command_case(
                "nodebug",
                sources.INLINE_SMALL,
                ["-O2"],
                ["-O2", HELPER_NOINLINE],
                truth_args=("15000",),
                debug=False,
            ),  # fmt: skip
            no_debug_truth("helper", "kernel"),
            (),
            tuple(Expect(lens, ("appeared",), "helper") for lens in EXPLAIN)
            + (Expect("asm", ("code_changed", "callee_changed"), "kernel"),),
            hottest={"base": "kernel", "change": "kernel|helper"},
        )
    )
    expected, tolerated = _outlined("slow_path", "process")
    cases.append(
        Case(
            "slow_path_cold",
            "a rare slow path inlined vs outlined to a cold function (gcc -O2 -g)",
            command_case(
                "slow_path_cold",
                sources.SLOW_PATH,
                ["-O2"],
                ["-O2", "-DOUTLINE"],
                truth_args=("15000",),
            ),
            outlining_truth("slow_path", "process"),
            expected,
            tolerated,
            hottest={"base": "process", "change": "process"},
        )
    )
    expected, tolerated = _outlined("weigh", "total")
    cases.append(
        Case(
            "clones",
            ".constprop/.part clones in both builds; weigh inlined vs its .isra clone (gcc -O2 -g)",
            command_case(
                "clones",
                sources.CLONES,
                ["-O2"],
                ["-O2", "-DWEIGH=static __attribute__((noinline))"],
                truth_args=("6000",),
            ),
            clones_truth,
            expected,
            tolerated + tuple(Expect("asm", ("code_changed",), "total") for _ in (0,)),
        )
    )
    expected, tolerated = _outlined(r"(KernelFunction::)?slowPath", r"(KernelFunction::)?call")
    cases.append(
        Case(
            "cxx_member_slow_path",
            "a C++ non-static member slow path forwarding `this`, inlined vs noinline (g++ -O2 -g)",
            command_case(
                "cxx_member",
                sources.CXX_MEMBER,
                ["-O2"],
                ["-O2", "-DSLOW=__attribute__((noinline))"],
                cxx=True,
                truth_args=("10000000",),
            ),
            outlining_truth(
                "slowPath", "_ZN14KernelFunction4call", symbol="_ZN14KernelFunction8slowPath"
            ),
            expected,
            tolerated,
            needs=_needs("g++"),
            reduced=True,
        )
    )
    vector = (Expect("asm", ("vector_width_changed", "code_changed"), "saxpy"),)
    vector_tolerated = (Expect("asm", ("vector_width_changed", "code_changed"), "saxpy"),)
    cases.append(
        Case(
            "vectorise_O2_O3",
            "-O2 vs -O3 of one loop: scalar vs 128-bit (gcc)",
            command_case("vectorise", sources.SAXPY, ["-O2"], ["-O3"], truth_args=("40000",)),
            vector_truth("saxpy", (0, 128)),
            vector,
            vector_tolerated,
            hottest={"base": "saxpy", "change": "saxpy"},
        )
    )
    cases.append(
        Case(
            "vectorise_clang",
            "clang -O2 -fno-vectorize vs -O2 of one loop: scalar vs 128-bit",
            command_case(
                "vectorise_clang",
                sources.SAXPY,
                ["-O2", "-fno-vectorize", "-fno-slp-vectorize"],
                ["-O2"],
                compiler="clang",
                truth_args=("40000",),
            ),
            vector_truth("saxpy", (0, 128)),
            vector,
            vector_tolerated,
            needs=_needs("clang"),
            hottest={"base": "saxpy", "change": "saxpy"},
        )
    )
    cases.append(
        Case(
            "sse_vs_avx2",
            "one loop built -O3 for SSE2 vs AVX2: 128- vs 256-bit (gcc)",
            command_case(
                "sse_avx2",
                sources.SAXPY,
                ["-O3", "-march=x86-64"],
                ["-O3", "-mavx2", "-mfma"],
                truth_args=("40000",),
            ),
            vector_truth("saxpy", (128, 256)),
            vector,
            vector_tolerated,
            needs=lambda: None if has_avx2() else "this CPU has no AVX2",
            hottest={"base": "saxpy", "change": "saxpy"},
        )
    )
    # one function, two spellings: one row, its width change said, nothing appeared
    sum_slice = r"sumbench::sum_slice(::h[0-9a-f]{16})?"
    cases.append(
        Case(
            "rust_two_hashes",
            "one Rust function under -C opt-level=3 vs + target-cpu=haswell, two -C metadata: "
            "two legacy hashes, 128- vs 256-bit",
            rust_case(
                "rust_hashes",
                sources.SUMBENCH_RS,
                ["-C", "opt-level=3"],
                ["-C", "opt-level=3", "-C", "target-cpu=haswell"],
                crate="sumbench",
                truth_args=("400000",),
            ),
            rust_hash_truth("sumbench::sum_slice", (128, 256)),
            (Expect("asm", ("vector_width_changed",), sum_slice),),
            (Expect("asm", ("vector_width_changed", "code_changed"), sum_slice),),
            needs=lambda: _needs("rustc")() or (None if has_avx2() else "this CPU has no AVX2"),
            reduced=True,
            hottest={"base": sum_slice, "change": sum_slice},
        )
    )
    cases.append(
        Case(
            "avx2_vs_avx512",
            "one loop built -O3 for AVX2 vs AVX-512: 256- vs 512-bit (gcc)",
            command_case(
                "avx2_avx512",
                sources.SAXPY,
                ["-O3", "-mavx2", "-mfma"],
                ["-O3", "-mavx512f", "-mprefer-vector-width=512"],
                truth_args=("40000",),
            ),
            vector_truth("saxpy", (256, 512)),
            vector,
            vector_tolerated,
            needs=_needs_avx512,
            hottest={"base": "saxpy", "change": "saxpy"},
        )
    )
    renamed_tolerated = (
        tuple(Expect(lens, ("appeared",), "compute_v2") for lens in EXPLAIN)
        + tuple(Expect(lens, ("disappeared",), "compute_v1") for lens in EXPLAIN)
        + (
            Expect("asm", ("callee_changed", "code_changed"), "driver|compute_v[12]"),
            Expect("instructions", ("callee_changed",), "driver|compute_v[12]"),
            # the truth's objdump: driver calls compute_v1 in base, compute_v2 in change
            Expect("profile", ("callee_changed",), "driver"),
        )
    )
    cases.append(
        Case(
            "renamed_callee",
            "the same call site calls compute_v1 vs compute_v2 (identical bodies)",
            command_case(
                "renamed",
                sources.RENAMED,
                ["-O2"],
                ["-O2", "-DCALLEE=compute_v2"],
                truth_args=("25000",),
            ),
            renamed_truth,
            (Expect("asm", ("callee_changed",), "driver|compute_v[12]"),),
            renamed_tolerated,
            hottest={"base": "compute_v1", "change": "compute_v2"},
        )
    )
    expected, tolerated = _dispatch(r"sum_ints(_sse2|_avx2)?")
    cases.append(
        Case(
            "ifunc_by_env",
            "a library's ifunc picks sum_ints_sse2 vs sum_ints_avx2 by an environment variable",
            library_case(
                "ifunc",
                sources.IFUNC_LIB,
                ["-O3"],
                ["-O3"],
                "lib.run(200)",
                env={"change": {"CORPUS_ISA": "avx2"}},
                loops=200,
            ),
            ifunc_truth,
            expected,
            tolerated,
            needs=lambda: None if has_avx2() else "this CPU has no AVX2",
            reduced=True,
            reduced_metrics=("asm", "profile"),  # python under callgrind: in the bench only
            hottest={"base": "sum_ints_sse2", "change": "sum_ints_avx2"},
        )
    )
    expected, tolerated = _dispatch("dot")
    cases.append(
        Case(
            "target_clones",
            "gcc target_clones: dot.avx2 (avx2,default build) vs dot.sse4_2 (sse4.2,default build)",
            library_case(
                "tclones",
                sources.TARGET_CLONES_LIB,
                ["-O3"],
                ["-O3", '-DCLONES="sse4.2","default"'],
                "lib.run(200)",
                loops=200,
            ),
            target_clones_truth,
            expected,
            tolerated,
            needs=lambda: None if has_avx2() else "this CPU has no AVX2",
            hottest={"base": r"dot\.avx2", "change": r"dot\.sse4_2"},
        )
    )
    expected, tolerated = _dispatch(r"(__)?strlen(_\w+)?")
    # the tunables mask AVX2 and AVX-512 for every ifunc of glibc's, so memset (CPython zeroes a
    # ctypes call's argument array with it) changes its variant too: a true claim in the A/B
    # when it is sampled often enough (perf: __memset_sse2_unaligned_erms under the tunables,
    # __memset_avx512_unaligned_erms without them), never needed: 0.1-0.2% of the samples
    tolerated += _dispatch(r"(__)?memset(_\w+)?")[1]
    cases.append(
        Case(
            "glibc_strlen_tunables",
            "glibc's strlen ifunc under GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2; libc stripped, "
            "symbols from libc6-dbg's build-id file",
            _glibc_build,
            libc_truth,
            expected,
            tolerated,
            needs=lambda: None if has_avx2() else "this CPU has no AVX2",
            reduced=True,
            reduced_metrics=("asm", "profile"),  # python under callgrind: in the bench only
            hottest={"base": r"__strlen_(avx2|evex)", "change": "__strlen_sse2"},
        )
    )
    family = r".*(DEFAULT|AVX2|CPU_CAPABILITY)::.*"
    expected, tolerated = _dispatch(family)
    cases.append(
        Case(
            "aten_cpu_capability",
            "torch.add under ATEN_CPU_CAPABILITY=default vs avx2 (ATen's DEFAULT::/AVX2:: kernels)",
            _aten_build,
            aten_truth,
            expected,
            tolerated,
            metrics=("asm", "profile"),  # libtorch under callgrind takes minutes
            needs=_needs_torch,
            hottest={"base": r".*DEFAULT::.*", "change": r".*AVX2::.*"},
        )
    )
    replaced = r"kernel|.*clamp_min.*|.*relu.*"
    cases.append(
        Case(
            "torch_compile",
            "torch.compile(torch.relu) vs eager torch.relu on 100,000 floats: inductor's generated "
            "`kernel` (a .main.so compiled at set-up, once per variant) against ATen's clamp_min "
            "loop; the A/A compiles in both variants",
            _torch_compile_build,
            torch_compile_truth,
            (
                Expect("asm", ("disappeared", "callee_changed"), "kernel"),
                Expect("asm", ("appeared", "callee_changed"), r".*clamp_min.*"),
            ),
            # the eager path and Dynamo's run whole call chains in one variant only
            tuple(
                Expect(lens, ("appeared", "disappeared", "callee_changed"), r".*")
                for lens in EXPLAIN
            )
            + (Expect("asm", ("code_changed",), replaced),),
            needs=_needs_torch,
            hottest={"base": "kernel", "change": r".*clamp_min.*", "same": "kernel"},
        )
    )
    cases.append(
        Case(
            "cpython_311_312",
            "CPython 3.11 vs 3.12 (pyenv builds, shared libpython3.11.so.1.0 / 3.12.so.1.0) on "
            "[x for x in range(100)]: 3.12 inlines the comprehension (PEP 709), no function "
            "object per run",
            _cpython_build,
            cpython_truth,
            (Expect("profile", ("disappeared",), "PyFunction_NewWithQualName"),),
            (
                Expect("asm", ("disappeared",), "PyFunction_NewWithQualName|rangeiter_next"),
                Expect("profile", ("disappeared",), "rangeiter_next"),
            ),
            needs=_needs_pythons,
        )
    )
    blas = r"dgemm_(kernel|itcopy|oncopy|incopy|otcopy|beta)_[A-Z0-9]+"
    cases.append(
        Case(
            "openblas_coretype",
            "numpy's a @ b with OpenBLAS's kernels for this CPU vs OPENBLAS_CORETYPE=Haswell "
            "(dgemm_kernel_SKYLAKEX, 512-bit, vs dgemm_kernel_HASWELL, 256-bit): names no ISA "
            "list knows; valgrind runs the Haswell kernel in both",
            _openblas_build,
            openblas_truth,
            (
                Expect("asm", ("dispatch_changed",), r"dgemm_kernel_[A-Z0-9]+"),
                Expect("asm", ("vector_width_changed",), r"dgemm_kernel_[A-Z0-9]+"),
                Expect("profile", ("dispatch_changed",), r"dgemm_kernel_[A-Z0-9]+"),
            ),
            (
                Expect("asm", ("dispatch_changed",), blas),
                Expect("profile", ("dispatch_changed",), blas),
                Expect("profile", ("appeared", "disappeared"), blas),
                Expect("asm", ("appeared", "disappeared"), blas),
            ),
            needs=_needs_numpy_avx512,
            hottest={"base": r"dgemm_kernel_\w+", "change": "dgemm_kernel_HASWELL"},
        )
    )
    return cases


def _needs_numpy_avx512() -> str | None:
    try:
        import numpy  # noqa: F401
    except ImportError:
        return "needs numpy"
    return _needs_avx512()


def _openblas_library() -> Path:
    import numpy

    found = sorted((Path(numpy.__file__).parent.parent / "numpy.libs").glob("lib*openblas*.so"))
    if not found:
        raise CaseInvalid("numpy has no bundled OpenBLAS (numpy.libs/lib*openblas*.so)")
    return found[0]


BLAS_SETUP = "import numpy as np; a = np.random.rand(256, 256); b = np.random.rand(256, 256)"
_CORENAME = (
    "import ctypes, sys; lib = ctypes.CDLL(sys.argv[1]); "
    "get = [getattr(lib, n) for n in ('scipy_openblas_get_corename64_', "
    "'openblas_get_corename64_', 'openblas_get_corename') if hasattr(lib, n)][0]; "
    "get.restype = ctypes.c_char_p; print(get().decode())"
)


def _openblas_build(directory: Path) -> Built:
    lib = _openblas_library()
    # the baseline runs the CPU's own choice unless OPENBLAS_CORETYPE is set on the machine:
    # the truth then finds both on Haswell and the case is invalid, not missed
    envs = {
        "base": {"OPENBLAS_NUM_THREADS": "1"},
        "change": {"OPENBLAS_NUM_THREADS": "1", "OPENBLAS_CORETYPE": "Haswell"},
        "same": {"OPENBLAS_NUM_THREADS": "1"},
    }
    return Built(
        name="openblas_coretype",
        variants=tuple(Variant(r, env=envs[r]) for r in ROLES),  # type: ignore[arg-type]
        objects={r: lib for r in ROLES},
        argv={r: _stmt_argv(BLAS_SETUP, "a @ b") for r in ROLES},
        env=envs,
        stmt="a @ b",
        setup=BLAS_SETUP,
    )


def openblas_truth(built: Built) -> list[str]:
    """OpenBLAS's own answer (its get_corename, in each variant's environment) and the kernels'
    widest vector registers (objdump)."""
    lib = built.objects["base"]

    def corename(role: str) -> str:
        # the environment the variant runs in: perflab's own, where OPENBLAS_CORETYPE may be set
        env = {**os.environ, **built.env[role]}
        return subprocess.run(
            [sys.executable, "-c", _CORENAME, str(lib)],
            capture_output=True, text=True, check=True, env=env,
        ).stdout.strip()  # fmt: skip

    base, change = corename("base"), corename("change")
    _require(change.lower() == "haswell", f"OpenBLAS: OPENBLAS_CORETYPE=Haswell runs {change}")
    _require(
        base.lower() != change.lower(),
        f"OpenBLAS: the baseline runs {base} too"
        + (
            " (OPENBLAS_CORETYPE is set in this environment: unset it to run this case)"
            if "OPENBLAS_CORETYPE" in os.environ
            else " (this CPU's own choice)"
        ),
    )
    old, new = f"dgemm_kernel_{base.upper()}", "dgemm_kernel_HASWELL"
    symbols = text_symbols(lib)
    _require(old in symbols and new in symbols, f"nm: {old} or {new} is not in {lib.name}")
    widths = vector_width(lib, old), vector_width(lib, new)
    _require(widths[0] != widths[1], f"objdump: {old} and {new} are both {widths[0]}-bit")
    for kind in ("itcopy", "oncopy", "incopy", "otcopy"):
        a, b = f"dgemm_{kind}_{base.upper()}", f"dgemm_{kind}_HASWELL"
        if a in symbols and b in symbols and vector_width(lib, a) != vector_width(lib, b):
            built.tolerated.append(Expect("asm", ("vector_width_changed",), re.escape(a)))
    return [
        f"OpenBLAS get_corename: {base} by default, {change} under OPENBLAS_CORETYPE=Haswell",
        f"objdump: {old} {widths[0]}-bit, {new} {widths[1]}-bit",
    ]


PYENV = Path("/root/.pyenv/versions")
PYTHONS = {"base": PYENV / "3.11.7/bin/python3.11", "change": PYENV / "3.12.1/bin/python3.12"}
PYTHONS["same"] = PYTHONS["base"]


def _needs_pythons() -> str | None:
    missing = [str(p) for p in PYTHONS.values() if not p.exists()]
    return f"no {', '.join(missing)} (pyenv's CPython 3.11.7 and 3.12.1)" if missing else None


def _libpython(python: Path) -> Path:
    """The libpython the interpreter loads (ldd): the case needs a shared one per version."""
    out = subprocess.run(["ldd", str(python)], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if "libpython" in line and "=>" in line:
            return Path(line.split("=>", 1)[1].split("(", 1)[0].strip())
    raise CaseInvalid(f"ldd: {python} links no shared libpython (build with --enable-shared)")


CPYTHON_STMT = "[x for x in range(100)]"
_BYTECODE = (
    "import dis, opcode; code = compile({stmt!r}, 's', 'exec'); "
    "ops = {{i.opname for i in dis.get_instructions(code)}}; "
    "print('MAKE_FUNCTION' in ops, 'FOR_ITER_RANGE' in opcode.opmap or "
    "'FOR_ITER_RANGE' in getattr(opcode, '_specialized_instructions', ()))"
)


def _cpython_build(directory: Path) -> Built:
    libs = {role: _libpython(python) for role, python in PYTHONS.items()}
    envs: dict[str, dict[str, str]] = {role: {} for role in ROLES}
    return Built(
        name="cpython_311_312",
        variants=tuple(Variant(r, python=str(PYTHONS[r])) for r in ROLES),  # type: ignore[arg-type]
        objects=libs,
        argv={r: statement_argv(str(PYTHONS[r]), "pass", CPYTHON_STMT) for r in ROLES},
        env=envs,
        stmt=CPYTHON_STMT,
        setup="pass",
    )


def cpython_truth(built: Built) -> list[str]:
    """The bytecode (dis, in each interpreter): 3.11 makes a function object for the
    comprehension (MAKE_FUNCTION) and 3.12 does not; only 3.12 specialises FOR_ITER over a
    range (FOR_ITER_RANGE, not calling rangeiter_next). Incidental claims about two different
    builds are tolerated where objdump and readelf show them: code that differs, inlined
    subroutines in either build's debug info."""

    def facts(role: str) -> tuple[bool, bool]:
        out = subprocess.run(
            [str(PYTHONS[role]), "-c", _BYTECODE.format(stmt=CPYTHON_STMT)],
            capture_output=True, text=True, check=True,
        ).stdout.split()  # fmt: skip
        return out[0] == "True", out[1] == "True"

    (old_makes, old_range), (new_makes, new_range) = facts("base"), facts("change")
    _require(old_makes and not new_makes, "dis: MAKE_FUNCTION is not in 3.11's code only")
    _require(new_range and not old_range, "opcode: FOR_ITER_RANGE is not 3.12's only")
    base, change = built.objects["base"], built.objects["change"]
    _require(base.name != change.name, "the two interpreters load one libpython")
    differs = code_differs(base, change)
    inlined = inlined_subroutines(base) | inlined_subroutines(change)
    built.tolerated.extend(
        Expect("asm", ("callee_changed", "code_changed"), re.escape(fold(name))) for name in differs
    )
    built.tolerated.extend(
        Expect("asm", ("inlined", "outlined"), re.escape(fold(name))) for name in inlined
    )
    return [
        "dis: 3.11 runs MAKE_FUNCTION for the comprehension, 3.12 does not (PEP 709)",
        "opcode: only 3.12 has FOR_ITER_RANGE (its range loop calls no rangeiter_next)",
        f"ldd: {base.name} vs {change.name}",
        f"objdump: {len(differs)} functions of both differ; readelf: {len(inlined)} functions "
        "inlined somewhere in either",
    ]


def _glibc_build(directory: Path) -> Built:
    setup = (
        "import ctypes; libc = ctypes.CDLL('libc.so.6'); "
        "buf = ctypes.create_string_buffer(b'x' * (1 << 18))"
    )
    stmt = "libc.strlen(buf)"
    tunables = "glibc.cpu.hwcaps=-AVX2,-AVX512F,-AVX512VL,-AVX512BW,-EVEX"
    envs = {"base": {}, "change": {"GLIBC_TUNABLES": tunables}, "same": {}}
    return Built(
        name="glibc_strlen",
        variants=tuple(Variant(r, env=envs[r]) for r in ROLES),  # type: ignore[arg-type]
        objects={r: LIBC for r in ROLES},
        argv={r: _stmt_argv(setup, stmt, 20000) for r in ROLES},
        env=envs,
        stmt=stmt,
        setup=setup,
    )


def _torch_compile_build(directory: Path) -> Built:
    setup = (
        "import os, torch; torch.set_num_threads(1); x = torch.randn(100_000); "
        "f = torch.compile(torch.relu) if os.environ.get('COMPILED') else torch.relu; f(x)"
    )
    stmt = "f(x)"
    envs = {
        r: ({} if r == "change" else {"COMPILED": "1"}) | {"OMP_NUM_THREADS": "1"} for r in ROLES
    }
    return _torch_build("torch_compile", setup, stmt, envs)


def _aten_build(directory: Path) -> Built:
    setup = (
        "import torch; a = torch.rand(1 << 16); b = torch.rand(1 << 16); c = torch.empty(1 << 16)"
    )
    stmt = "torch.add(a, b, out=c)"
    capability = {"base": "default", "change": "avx2", "same": "default"}
    envs = {r: {"ATEN_CPU_CAPABILITY": capability[r], "OMP_NUM_THREADS": "1"} for r in ROLES}
    return _torch_build("aten", setup, stmt, envs)


def _torch_build(name: str, setup: str, stmt: str, envs: dict[str, dict[str, str]]) -> Built:
    """A torch statement under each role's environment; libtorch_cpu.so is the object."""
    import torch

    lib = Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"
    return Built(
        name=name,
        variants=tuple(Variant(r, env=envs[r]) for r in ROLES),  # type: ignore[arg-type]
        objects={r: lib for r in ROLES},
        argv={r: _stmt_argv(setup, stmt, 5000) for r in ROLES},
        env=envs,
        stmt=stmt,
        setup=setup,
    )


CASES = _case_list()
REDUCED = [c for c in CASES if c.reduced]
