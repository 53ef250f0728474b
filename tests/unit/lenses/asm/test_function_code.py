"""Where listed functions are called from (`call_sites`): the callees read are those of the copy
the samples ran in, where an object defines one name more than once."""

from __future__ import annotations

from pathlib import Path

from perflab.lenses.asm.function_code import call_sites
from perflab.lenses.asm.locate import FoundFunction
from perflab.lenses.asm.sources import CodeSample, ProfiledRegion
from perflab.tool_drivers.elf_objects import ElfObject, ElfSymbol, LoadSegment

# two static `kernel`s of one object (numpy's X86_V4 and X86_V3 objects each define theirs):
# the first calls helper_avx512, the second helper_avx2
FIRST, SECOND, AVX512, AVX2 = 0x1000, 0x2010, 0x3000, 0x3100
CALL_AVX512 = bytes.fromhex("e8fb1f0000c3")  # at 0x1000: call 0x3000; ret
CALL_AVX2 = bytes.fromhex("e8eb100000c3")  # at 0x2010: call 0x3100; ret
RET = bytes.fromhex("c3")


def _symbol(name: str, address: int, size: int) -> ElfSymbol:
    return ElfSymbol(name, name, address, size, is_function=True, is_global=False)


def _object(tmp_path: Path) -> ElfObject:
    image = bytearray(0x4000)
    for address, code in ((FIRST, CALL_AVX512), (SECOND, CALL_AVX2), (AVX512, RET), (AVX2, RET)):
        image[address : address + len(code)] = code
    path = tmp_path / "libdispatch.so"
    path.write_bytes(bytes(image))
    symbols = (
        _symbol("kernel", FIRST, len(CALL_AVX512)),
        _symbol("kernel", SECOND, len(CALL_AVX2)),
        _symbol("helper_avx512", AVX512, 1),
        _symbol("helper_avx2", AVX2, 1),
    )
    return ElfObject(
        path=str(path),
        position_independent=True,
        segments=(LoadSegment(vaddr=0, offset=0, filesz=0x4000, executable=True),),
        sections=(),
        symbols=symbols,
        plt={},
        got={},
    )


def _region(obj: ElfObject, start: int | None) -> ProfiledRegion:
    sample = CodeSample(obj.path, "kernel", 0, weight=50.0, symbol_start=start)
    return ProfiledRegion((sample,), (obj.path,))


def test_the_callees_are_those_of_the_copy_the_samples_ran_in(tmp_path: Path) -> None:
    obj = _object(tmp_path)
    second = obj.symbols[1]
    found = [FoundFunction(obj, second, 50.0, (0x7F0000000000 + SECOND,))]
    # loaded page-aligned: the sampled start's offset in its page names the second copy
    sites = call_sites(_region(obj, 0x7F0000000000 + SECOND), _NoDemangler(), found)
    assert sites["kernel"] == ["helper_avx2"]
    first = call_sites(_region(obj, 0x7F0000000000 + FIRST), _NoDemangler(), found)
    assert first["kernel"] == ["helper_avx512"]


def test_without_the_sampled_start_the_first_of_the_name_is_read(tmp_path: Path) -> None:
    obj = _object(tmp_path)
    found = [FoundFunction(obj, obj.symbols[0], 50.0)]
    sites = call_sites(_region(obj, None), _NoDemangler(), found)
    assert sites["kernel"] == ["helper_avx512"]


class _NoDemangler:
    def demangle(self, names: object) -> dict[str, str]:
        return {}
