"""The copies a compiler makes of one source function, folded back into it: one rule for every
lens that compares functions by name across builds (instructions, profile, asm).

gcc and clang split a function's unlikely blocks off (``foo.cold``, ``foo.part.0``) and
specialise it (``foo.isra.0``, ``foo.constprop.0``, LLVM's ``foo.specialized.1``); LTO renames
(``foo.lto_priv.0``, ``foo.llvm.123456``). The suffixes stack (``foo.constprop.0.isra.0``) and
come in three spellings: in the symbol table (``foo.isra.0``), demangled by c++filt, callgrind
or ``nm -C`` (``foo() [clone .isra.0]``) and by llvm-symbolizer (``foo() (.isra.0)``).

Not folded: the members of a dispatch family, several compiled versions of one function of which
the program picks one at run time (gcc's ``target_clones``: ``foo.avx2``, ``foo.default``,
``foo.resolver``, ``foo() [clone .avx2]``). One running in place of another is a dispatch
change, which the asm lens claims (`perflab.lenses.asm.identity`) and the instructions and
profile lenses show as two functions. Pure string rules, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

# the kinds of copy, as the suffix names them
_KIND_WORDS = (
    "cold",
    "part",
    "isra",
    "constprop",
    "lto_priv",
    "localalias",
    "clone",
    "llvm",
    "specialized",
)
_KINDS = rf"(?:{'|'.join(_KIND_WORDS)})"
_SUFFIX_START = re.compile(rf"\.{_KINDS}")
_SUFFIX = rf"\.{_KINDS}(?:\.\d+)*"
_MANGLED = re.compile(rf"(?:{_SUFFIX})+$")
_DEMANGLED = re.compile(rf"\s*(?:\[clone |\()(?:{_SUFFIX})+[\])]")


def split_clone_suffixes(name: str) -> tuple[str, str]:
    """(the function's name, the copy's suffixes as written: "" for the function itself)."""
    if not _SUFFIX_START.search(name):  # most names have no suffix
        return name.strip() or name, ""
    brackets = "".join(found.group(0) for found in _DEMANGLED.finditer(name))
    rest = _DEMANGLED.sub("", name)
    suffix = _MANGLED.search(rest)
    base = rest[: suffix.start()] if suffix else rest
    base = base.strip()
    if not base:  # a name that is all suffix (".cold") is its own name
        return name, ""
    return base, (suffix.group(0) if suffix else "") + brackets


def fold_clones(name: str) -> str:
    """The source function a symbol's code belongs to: ``foo`` for ``foo.isra.0``,
    ``foo() [clone .cold]`` and ``foo() (.part.0)``; dispatch members are kept."""
    return split_clone_suffixes(name)[0]


_WORDS = re.compile(r"([_.:]+)")


def word_change(old: str, new: str) -> tuple[str, str] | None:
    """The one word two names differ in (`dgemm_kernel_SKYLAKEX`, `dgemm_kernel_HASWELL`:
    SKYLAKEX -> HASWELL), or None when they differ in more or in none. A hint for pairing the
    builds of one function for different CPUs, never evidence on its own."""
    a, b = _WORDS.split(old), _WORDS.split(new)
    if len(a) != len(b):
        return None
    differ = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
    if len(differ) != 1:
        return None
    x, y = differ[0]
    if not x or not y or _WORDS.fullmatch(x) or _WORDS.fullmatch(y):
        return None
    return x, y


# -- what a build spells differently ------------------------------------------------------------
#
# One source function built twice can be spelled two ways: Rust's legacy mangling ends in a hash
# of the crate's build flags (``sum_slice::h6d32bd3152f0eb41``), v0 mangling names the crate with
# a disambiguator (c++filt: ``sumbench[73200543cee1b05f]::sum_slice``), gcc numbers local
# statics (``counter.1234``), and the clone suffixes above carry build-dependent numbers. The
# same spelling parts also tell apart different functions of ONE build (the instantiations of a
# generic function differ only in their hash), so they are never folded within a build: a name
# is paired with a differently spelled one of the other build only when each build has exactly
# one function of that stem (`pair_names`).

_RUST_HASH = re.compile(r"::h[0-9a-f]{16}$")
_V0_CRATE = re.compile(r"(?<=[A-Za-z0-9_])\[[0-9a-f]{1,16}\](?=::|$)")
# the same disambiguator in a v0 symbol no demangler read: a crate root `C s<base-62> _ <len>`
_V0_MANGLED_CRATE = re.compile(r"C(?:s[0-9A-Za-z]*_)(?=\d)")
_LOCAL_NUMBER = re.compile(r"\.\d+$")
_LEGACY_ESCAPE = re.compile(r"\$(SP|BP|RF|LT|GT|LP|RP|C|u[0-9a-f]{2,6})\$")
_LEGACY_WORDS = {
    "SP": "@", "BP": "*", "RF": "&", "LT": "<", "GT": ">", "LP": "(", "RP": ")", "C": ",",
}  # fmt: skip
# a legacy path component that starts with an escape gets a leading underscore: `_$LT$`
_LEGACY_UNDERSCORE = re.compile(r"(^|::|<|\s)_(?=\$)")


def _legacy_escape(match: re.Match[str]) -> str:
    word = match.group(1)
    if word in _LEGACY_WORDS:
        return _LEGACY_WORDS[word]
    code = int(word[1:], 16)
    return chr(code) if code < 0x110000 else match.group(0)


def decode_rust_legacy(name: str) -> str:
    """Rust legacy mangling's escapes decoded (`$LT$` -> `<`, `$u20$` -> ` `, `..` -> `::`),
    for a name a demangler left half done (its Itanium frame read, its Rust escapes not). A
    name without those escapes is returned as it is: `..` alone is no evidence of Rust."""
    if not _LEGACY_ESCAPE.search(name):
        return name
    name = _LEGACY_UNDERSCORE.sub(r"\1", name)
    name = _LEGACY_ESCAPE.sub(_legacy_escape, name)
    return name.replace("..", "::")


def plt_target(name: str) -> str:
    """The function a PLT stub jumps to (`_Py_Dealloc@plt` -> `_Py_Dealloc`), else the name: a
    sample in the stub is the call's way into that function, and perf names the stub's samples
    apart in one run of identical code and as the function's in another."""
    return name.removesuffix("@plt") or name


def readable(name: str) -> str:
    """The name as a person reads it: Rust legacy escapes decoded, the legacy hash
    (``::h<16 hex>``) and v0 crate disambiguators (``crate[hex]``) left out."""
    base, suffix = split_clone_suffixes(name)
    base = _V0_CRATE.sub("", _RUST_HASH.sub("", decode_rust_legacy(base)))
    return base + suffix


# a name longer than this is shortened where a sentence names it (`brief`)
BRIEF_CHARS = 100
_SHORT_ARGUMENTS = 30  # template arguments this short stay: they are not what makes it long
# in template arguments: a function called (`impl(`) or pointed to (`&ns::relu`)
_PART = r"(?:\w+|\(anonymous namespace\))"
_NAMED_FUNCTION = re.compile(rf"([A-Za-z_]\w*)\(|&(?:{_PART}::)*(\w+)")
_NOT_A_CALLEE = frozenset({"operator", "lambda", "decltype", "sizeof", "alignof", "noexcept"})


def brief(name: str, limit: int = BRIEF_CHARS) -> str:
    """A long C++ name as a sentence names it: each long template argument list of the
    outermost name folded to `<…>`, keeping the first function the arguments name (`callback_fn<…
    clamp_min_scalar_kernel_impl…>`: which kernel a dispatcher's callback runs). Names up to
    `limit` characters, and names whose brackets do not balance, are returned as they are."""
    if len(name) <= limit:
        return name
    out: list[str] = []
    inside: list[str] = []
    depth = 0
    i = 0
    while i < len(name):
        char = name[i]
        if depth == 0 and name.endswith("operator", 0, i):
            operator = re.match(r"<=>|<<=|>>=|<<|>>|<=|>=|->|<|>", name[i:])
            if operator:  # `operator<` and its kin are part of the name, not a bracket
                out.append(operator.group(0))
                i += len(operator.group(0))
                continue
        if char == "<":
            depth += 1
            if depth == 1:
                inside = []
                i += 1
                continue
        elif char == ">" and depth > 0 and name[i - 1] != "-":
            depth -= 1
            if depth == 0:
                out.append(_folded_arguments("".join(inside)))
                i += 1
                continue
        (inside if depth else out).append(char)
        i += 1
    return name if depth else "".join(out)


def _folded_arguments(arguments: str) -> str:
    if len(arguments) <= _SHORT_ARGUMENTS:
        return f"<{arguments}>"
    names = (m.group(1) or m.group(2) for m in _NAMED_FUNCTION.finditer(arguments))
    callee = next((n for n in names if n not in _NOT_A_CALLEE), None)
    return f"<…{callee}…>" if callee else "<…>"


def spelling_stem(name: str) -> str:
    """The function's name without anything a build spells differently (clone suffixes, the
    Rust hash, v0 crate disambiguators, local numbering): equal stems across builds *may* be one
    function; `pair_names` decides."""
    stem = _LOCAL_NUMBER.sub("", readable(fold_clones(name)))
    return _V0_MANGLED_CRATE.sub("C", stem) if stem.startswith("_R") else stem


@dataclass(frozen=True)
class NamePair:
    """One function spelled differently by two builds, and why they were taken for one."""

    baseline: str
    variant: str

    @property
    def reason(self) -> str:
        return (
            f"{self.variant} (variant) is {self.baseline} (baseline): the only function named "
            f"{spelling_stem(self.baseline)} in each build, spelled differently by its build"
        )


@dataclass(frozen=True)
class UnpairedStem:
    """Several functions of one stem in a build, some spelled differently in the other: which
    is which cannot be told by name, so only those spelled alike are paired (the
    instantiations of a generic Rust function differ only in their hash)."""

    stem: str
    baseline: tuple[str, ...]  # every spelling of the stem in each build
    variant: tuple[str, ...]

    @property
    def reason(self) -> str:
        return (
            f"{len(self.baseline)} function(s) named {self.stem} in the baseline and "
            f"{len(self.variant)} in the variant, told apart only by what a build spells (a "
            "hash, a disambiguator, a number): only those spelled alike are paired, as which "
            "of the others is which cannot be told by name"
        )


@dataclass(frozen=True)
class NamePairing:
    """How the variant's function names map onto the baseline's: decided once, here, for
    every lens, so that one function is one row everywhere."""

    pairs: tuple[NamePair, ...] = ()
    unpaired: tuple[UnpairedStem, ...] = ()

    @cached_property
    def renamed(self) -> dict[str, str]:
        """The variant's spelling -> the baseline's, for the pairs whose spellings differ."""
        return {pair.variant: pair.baseline for pair in self.pairs}

    @cached_property
    def _by_name(self) -> dict[str, NamePair]:
        return {name: p for p in self.pairs for name in (p.baseline, p.variant)}

    def variant_name(self, name: str) -> str:
        """A variant's name as the baseline spells the same function (clone suffixes kept)."""
        base, suffix = split_clone_suffixes(name)
        paired = self.renamed.get(base)
        return name if paired is None else paired + suffix

    def pair_of(self, name: str) -> NamePair | None:
        """The pair a name (either side's spelling) belongs to."""
        return self._by_name.get(fold_clones(name))


def _spellings(names: Iterable[str]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for name in names:
        out.setdefault(spelling_stem(name), set()).add(fold_clones(name))
    return out


def pair_names(baseline: Iterable[str], variant: Iterable[str]) -> NamePairing:
    """Pair each variant name with the baseline's spelling of the same function: equal names
    pair as they are; differently spelled ones only when their stem names exactly one function
    in each build. Within one build nothing is merged."""
    before, after = _spellings(baseline), _spellings(variant)
    pairs: list[NamePair] = []
    unpaired: list[UnpairedStem] = []
    for stem in sorted(before.keys() & after.keys()):
        left, right = before[stem] - after[stem], after[stem] - before[stem]
        if not left or not right:
            continue  # every spelling of one side is the other's too
        if len(before[stem]) == 1 and len(after[stem]) == 1:
            pairs.append(NamePair(next(iter(left)), next(iter(right))))
        else:
            unpaired.append(
                UnpairedStem(stem, tuple(sorted(before[stem])), tuple(sorted(after[stem])))
            )
    return NamePairing(tuple(pairs), tuple(unpaired))


# -- one function built for several CPUs, picked at run time ------------------------------------
#
# Libraries that dispatch through their own tables (numpy, OpenBLAS, ATen, MKL) compile one
# function once per CPU feature level or core type and name each copy by it: `DOUBLE_add_X86_V3`
# beside `DOUBLE_add`, `dgemm_kernel_HASWELL` beside `dgemm_kernel_SKYLAKEX`,
# `at::native::AVX2::add_kernel` beside `at::native::DEFAULT::add_kernel`. A suffix alone is no
# evidence (a library may name unrelated functions so); two copies are taken for one dispatch
# only when each ran in one variant only, no other copy of the stem ran, and the variants differ
# in what selects the copy (`SELECTORS`, or the machine).

# the environment variables that choose a library's compiled copy
SELECTORS = (
    "NPY_DISABLE_CPU_FEATURES",
    "NPY_ENABLE_CPU_FEATURES",
    "OPENBLAS_CORETYPE",
    "ATEN_CPU_CAPABILITY",
    "GLIBC_TUNABLES",
    "MKL_ENABLE_INSTRUCTIONS",
)
_CPU_WORD = (
    r"X86_V[1-4]|AVX512[A-Z0-9_]*?|AVX2|AVX|SSE[0-9_]*|SSSE3|FMA[34]?|NEON|ASIMD[A-Z0-9]*|"
    r"SVE[0-9]*|VSX[0-9]*|VX[0-9]*|Z(?:EN[0-9]*)|HASWELL|SKYLAKEX|SANDYBRIDGE|COOPERLAKE|"
    r"SAPPHIRERAPIDS|NEHALEM|PRESCOTT|CORE2|ATOM|PENRYN|DUNNINGTON|BULLDOZER|PILEDRIVER|"
    r"STEAMROLLER|EXCAVATOR|BARCELONA|OPTERON(?:_SSE3)?|NEOVERSEN[12]|NEOVERSEV1|ARMV8|"
    r"CORTEXA[0-9]+|THUNDERX[0-9T]*|DEFAULT|BASELINE"
)
# a trailing `_AVX2`, `_x86_v3`, `_haswell` (any case); or an ATen ISA namespace `::AVX2::`
_CPU_SUFFIX = re.compile(rf"(?i)_(?P<word>{_CPU_WORD})$")
_CPU_NAMESPACE = re.compile(rf"(?<=::)(?P<word>{_CPU_WORD})(?=::)")


def cpu_copy(name: str) -> tuple[str, str]:
    """(the function's stem, the CPU feature or core type its copy is named for: "" for the
    unsuffixed copy): `DOUBLE_add_X86_V3` -> (`DOUBLE_add`, `X86_V3`), `DOUBLE_add` ->
    (`DOUBLE_add`, ""). A name, never evidence on its own."""
    base = fold_clones(name)
    found = _CPU_NAMESPACE.search(base)
    if found:
        return _CPU_NAMESPACE.sub("*", base), found.group("word")
    found = _CPU_SUFFIX.search(base)
    if found and found.start() > 0:
        return base[: found.start()], found.group("word")
    return base, ""


def selector_changes(
    baseline_env: Mapping[str, str],
    variant_env: Mapping[str, str],
    baseline_machine: str | None = None,
    variant_machine: str | None = None,
) -> tuple[str, ...]:
    """What differs between two variants in choosing a library's compiled copy, in words: each
    selecting environment variable set differently, and the machine; () when nothing does."""

    def shown(env: Mapping[str, str], key: str) -> str:
        return f"{key}={env[key]}" if key in env else f"{key} unset"

    found = tuple(
        f"env: {shown(baseline_env, key)} in the baseline, {shown(variant_env, key)} in the variant"
        for key in SELECTORS
        if baseline_env.get(key) != variant_env.get(key)
    )
    if baseline_machine and variant_machine and baseline_machine != variant_machine:
        found += (f"machine: {baseline_machine} in the baseline, {variant_machine} in the variant",)
    return found


@dataclass(frozen=True)
class DispatchPair(NamePair):
    """Two compiled copies of one function of one object, one run in place of the other, and
    the evidence that a selector chose them rather than a rename."""

    stem: str = ""
    object_name: str = ""  # the object (library, binary) both are functions of
    selectors: tuple[str, ...] = ()
    caller: str = ""  # the one caller both were called from, where stacks said so

    @property
    def reason(self) -> str:
        return (
            f"{self.variant} (variant) ran in place of {self.baseline} (baseline): two CPU "
            f"copies of {self.stem}, each the only one that ran in its variant; "
            + "; ".join(self.selectors)
        )

    def evidence(self) -> tuple[str, ...]:
        where = f" in {self.object_name}" if self.object_name else ""
        out = (
            f"names: {self.baseline} and {self.variant}{where} are the "
            f"{cpu_copy(self.baseline)[1] or 'unsuffixed'} and "
            f"{cpu_copy(self.variant)[1] or 'unsuffixed'} copies of {self.stem}, each the only "
            "one that ran in its variant",
            *self.selectors,
        )
        return out + ((f"perf: both called from {self.caller}",) if self.caller else ())

    def to_json(self) -> dict[str, object]:
        return {
            "from": self.baseline,
            "to": self.variant,
            "stem": self.stem,
            "object": self.object_name,
            "selected_by": list(self.selectors),
            "caller": self.caller,
        }


def dispatch_pairs(
    baseline_ran: Iterable[str],
    variant_ran: Iterable[str],
    selectors: Sequence[str],
    *,
    callers: Mapping[str, str] | None = None,
    object_of: Mapping[str, str] | None = None,
) -> tuple[DispatchPair, ...]:
    """The pairs of CPU copies of one stem where the baseline ran only one copy and the variant
    only another, and the variants differ in a selector (`selector_changes`). The functions of
    one object only: `object_of` (name -> object, both sides) where known. Where `callers`
    (name -> its caller on the stacks, both sides) knows both, they must be one caller. Pure."""
    if not selectors:
        return ()  # a suffix alone is not evidence
    objects = object_of or {}

    def copies(names: Iterable[str]) -> dict[tuple[str, str], set[str]]:
        out: dict[tuple[str, str], set[str]] = {}
        for name in names:
            out.setdefault((cpu_copy(name)[0], objects.get(name, "")), set()).add(fold_clones(name))
        return out

    before, after = copies(baseline_ran), copies(variant_ran)
    found = []
    for key in sorted(before.keys() & after.keys()):
        old, new = before[key], after[key]
        if len(old) != 1 or len(new) != 1 or old == new:
            continue  # several copies ran, or the same one in both: not one replacing another
        (a,), (b,) = old, new
        if not (cpu_copy(a)[1] or cpu_copy(b)[1]):
            continue  # neither is named for a CPU
        caller = ""
        if callers is not None and a in callers and b in callers:
            if callers[a] != callers[b]:
                continue  # another call site: not the same choice
            caller = callers[a]
        found.append(DispatchPair(a, b, key[0], key[1], tuple(selectors), caller))
    return tuple(found)


def with_dispatches(pairing: NamePairing, dispatches: Iterable[DispatchPair]) -> NamePairing:
    """`pairing` with each dispatch pair taken as one function's row too (a lens that shows
    one row per function: the two copies' costs side by side), unless either name is paired
    already."""
    taken = {name for pair in pairing.pairs for name in (pair.baseline, pair.variant)}
    extra = tuple(d for d in dispatches if d.baseline not in taken and d.variant not in taken)
    return NamePairing((*pairing.pairs, *extra), pairing.unpaired) if extra else pairing


# -- one template instantiated for two vector types ---------------------------------------------
#
# A C++ library may instantiate one template once per vector type and call the instantiation its
# CPU supports (numpy's x86-simd-sort: `sort_n_vec<zmm_vector<float>, ..., float __vector(16)>`
# beside `sort_n_vec<avx2_vector<float>, ..., float __vector(8)>`). The template arguments that
# name a vector type or width are what the build spells per CPU; an unroll count that follows the
# width (`partition_unrolled<zmm_vector<float>, ..., 8, float>` vs `<avx2_vector<float>, ..., 4,
# float>`) is read as one only where no instantiation matches with the counts kept.

# a vector type named by its register or ISA (`zmm_vector`, `avx2_vector`), an intrinsic type
# (`__m512`, `__m256i`) or gcc's vector extension (`float __vector(16)`)
_VECTOR_ARGUMENT = re.compile(
    r"(?i)(?<![A-Za-z0-9_])(?:zmm|ymm|xmm|avx512[a-z0-9]*|avx2|avx|sse[0-9]*|neon|sve[0-9]*|"
    r"asimd|vsx)(?=_)|(?<![A-Za-z0-9_])__m(?:128|256|512)[a-z]?(?![A-Za-z0-9_])|__vector\(\d+\)"
)
_COUNT_ARGUMENT = re.compile(r"(?<=[<,])(\s*)(\d+)(?=\s*[,>])")


def vector_instance(name: str, *, counts: bool = False) -> tuple[str, tuple[str, ...]]:
    """(the template with every argument spelling that names a vector type or width left out,
    those spellings in order): `sort_n_vec<zmm_vector<float>, 32, float __vector(16)>` ->
    (`sort_n_vec<*_vector<float>, 32, float *>`, (`zmm`, `__vector(16)`)). With `counts`,
    integer template arguments are left out too. ("", ()) for a name without a vector type in
    its template arguments. A name, never evidence on its own."""
    base = fold_clones(name)
    start = base.find("<")
    if start < 0:
        return "", ()
    head, tail = base[:start], base[start:]
    words = [found.group(0) for found in _VECTOR_ARGUMENT.finditer(tail)]
    if not words:
        return "", ()
    tail = _VECTOR_ARGUMENT.sub("*", tail)
    if counts:
        words += [found.group(2) for found in _COUNT_ARGUMENT.finditer(tail)]
        tail = _COUNT_ARGUMENT.sub(r"\1#", tail)
    return head + tail, tuple(words)


@dataclass(frozen=True)
class VectorPair(NamePair):
    """Two instantiations of one template for two vector types, in one object, each the only
    instantiation of it that ran in its variant: one ran in place of the other."""

    template: str = ""  # the template with its vector arguments left out
    object_name: str = ""
    arguments: tuple[tuple[str, str], ...] = ()  # the argument spellings that differ

    @property
    def arguments_text(self) -> str:
        return ", ".join(f"{old} -> {new}" for old, new in self.arguments)

    @property
    def reason(self) -> str:
        where = f" in {self.object_name}" if self.object_name else ""
        return (
            f"{self.variant} (variant) ran in place of {self.baseline} (baseline): one template "
            f"instantiated for other vector types ({self.arguments_text}){where}, each the only "
            "instantiation of it that ran in its variant"
        )

    def to_json(self) -> dict[str, object]:
        return {
            "from": self.baseline,
            "to": self.variant,
            "template": self.template,
            "object": self.object_name,
            "arguments": [list(pair) for pair in self.arguments],
        }


def vector_pairs(
    baseline_ran: Iterable[str],
    variant_ran: Iterable[str],
    *,
    object_of: Mapping[str, str] | None = None,
) -> tuple[VectorPair, ...]:
    """The instantiations of one template for two vector types (`vector_instance`), one object's
    (`object_of`: name -> object, both sides, where known), where the baseline ran only one and
    the variant only another. Matched with integer arguments kept first, then without them for
    what is left. Two that both ran are never a pair. Pure."""
    objects = object_of or {}
    # the names as given, so a caller finds its own: `vector_instance` folds clones for the key
    before = {n: objects.get(n, "") for n in baseline_ran}
    after = {n: objects.get(n, "") for n in variant_ran}
    found: list[VectorPair] = []
    for counts in (False, True):
        taken = {name for pair in found for name in (pair.baseline, pair.variant)}
        found += _vector_pairs_by(
            {n: o for n, o in before.items() if n not in taken},
            {n: o for n, o in after.items() if n not in taken},
            counts=counts,
        )
    return tuple(found)


def _vector_pairs_by(
    before: Mapping[str, str], after: Mapping[str, str], *, counts: bool
) -> list[VectorPair]:
    def instances(names: Mapping[str, str]) -> dict[tuple[str, str], dict[str, str]]:
        """(template, object) -> each instantiation (clones folded) -> its shortest spelling."""
        out: dict[tuple[str, str], dict[str, str]] = {}
        for name, obj in sorted(names.items(), key=lambda item: -len(item[0])):
            key = vector_instance(name, counts=counts)[0]
            if key:
                out.setdefault((key, obj), {})[fold_clones(name)] = name
        return out

    left, right = instances(before), instances(after)
    found = []
    for key in sorted(left.keys() & right.keys()):
        old, new = left[key], right[key]
        if len(old) != 1 or len(new) != 1 or old.keys() == new.keys():
            continue  # several instantiations ran, or the same one in both
        (a,), (b,) = old.values(), new.values()
        words_a, words_b = (
            vector_instance(a, counts=counts)[1],
            vector_instance(b, counts=counts)[1],
        )
        vectors = vector_instance(a)[1] != vector_instance(b)[1]
        if not vectors or len(words_a) != len(words_b):
            continue  # only integer arguments differ: not another vector type
        differ = dict.fromkeys((x, y) for x, y in zip(words_a, words_b, strict=True) if x != y)
        found.append(VectorPair(a, b, key[0], key[1], tuple(differ)))
    return found
