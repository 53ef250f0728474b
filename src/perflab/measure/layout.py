"""Environment padding: where a process's stack starts, drawn at random and alike for every variant.

A process's stack begins below its argument and environment strings, so their size moves every
stack address, and with it alignment and cache-set effects that can be worth a few percent
(Mytkowicz et al., "Producing wrong data without doing anything obviously wrong!", ASPLOS
2009). Two variants whose environments or argument lists differ in size (another working
directory, another interpreter path, a longer setting) would otherwise run at a fixed offset from
each other for the whole run: a layout effect read as the code's. So every measuring process gets
one padding variable whose length is

    the same random draw for all variants of one unit (a generation, a command block)
    + what equalises this variant's strings with the largest variant's,

so within a unit the variants' stacks start at the same place, and across units the place is
drawn anew: the effect becomes noise that the interval sees, not a bias.

Where the layout must not vary at all (callgrind's counts, which are meant to repeat exactly), the
draw is left out: every variant's environment is padded to one fixed size
(`fixed_padding_target`, `padded_to`), with the same variable.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

LAYOUT_PADDING_VARIABLE = "PERFLAB_LAYOUT_PADDING"
MAX_LAYOUT_PADDING = 4096  # bytes of environment: moves the stack by up to a page


# a fixed padding target is rounded up to this: a few bytes more in the largest environment
# (another user name, another directory) then leave every variant's stack where it was
_FIXED_TARGET_STEP_BYTES = 256


def environment_bytes(env: Mapping[str, str]) -> int:
    """Bytes the kernel copies onto a new process's stack for `env`: `KEY=value\\0` per
    variable, the padding variable included."""
    return sum(len(key.encode()) + len(value.encode()) + 2 for key, value in env.items())


def strings_bytes(env: Mapping[str, str], argv: Sequence[str] = ()) -> int:
    """Bytes the kernel copies onto a new process's stack for these: `KEY=value\\0` per
    variable, `arg\\0` per argument (the padding variable itself not counted)."""
    size = environment_bytes({k: v for k, v in env.items() if k != LAYOUT_PADDING_VARIABLE})
    return size + sum(len(arg.encode()) + 1 for arg in argv)


def equalised_paddings(sizes: Sequence[int], draw: int) -> list[int]:
    """Each variant's padding length: `draw` plus the difference to the largest size."""
    largest = max(sizes, default=0)
    return [draw + largest - size for size in sizes]


def draw_padding(rng: random.Random) -> int:
    return rng.randrange(MAX_LAYOUT_PADDING)


def padded(env: Mapping[str, str], length: int) -> dict[str, str]:
    """`env` with the padding variable of `length` characters."""
    return {**env, LAYOUT_PADDING_VARIABLE: "x" * length}


def fixed_padding_target(envs: Sequence[Mapping[str, str]]) -> int:
    """The size (bytes) every one of `envs` is padded to where the layout must not vary: room
    for the largest and the padding variable, no random draw, rounded up to 256 bytes."""
    largest = max((environment_bytes(env) for env in envs), default=0)
    needed = largest + len(LAYOUT_PADDING_VARIABLE) + 2
    return -(-needed // _FIXED_TARGET_STEP_BYTES) * _FIXED_TARGET_STEP_BYTES


def padded_to(env: Mapping[str, str], target_bytes: int) -> dict[str, str]:
    """`env` with the padding variable sized so that it takes exactly `target_bytes` (when it
    fits; else without one). A padding variable `env` held is replaced."""
    out = {k: v for k, v in env.items() if k != LAYOUT_PADDING_VARIABLE}
    room = target_bytes - environment_bytes(out) - len(LAYOUT_PADDING_VARIABLE) - 2
    return padded(out, room) if room >= 0 else out


def padded_environments(
    envs: Sequence[Mapping[str, str]], argvs: Sequence[Sequence[str]], rng: random.Random
) -> list[dict[str, str]]:
    """One unit's environments, every variant's padded so their strings end at the same size,
    plus one random draw shared by all."""
    sizes = [strings_bytes(env, argv) for env, argv in zip(envs, argvs, strict=True)]
    lengths = equalised_paddings(sizes, draw_padding(rng))
    return [padded(env, length) for env, length in zip(envs, lengths, strict=True)]


def equalise_padding(
    extras: Sequence[Mapping[str, str]],
    envs: Sequence[Mapping[str, str]],
    argvs: Sequence[Sequence[str]],
) -> list[dict[str, str]]:
    """Workers' extra environments (`extras`, each with the generation's shared padding) with
    each variant's padding lengthened by what equalises its strings (`envs`: the rest of its
    environment; `argvs`: what it runs) with the largest variant's. A variant that sets the
    padding variable itself keeps its own."""
    sizes = [
        strings_bytes({**env, **extra}, argv)
        for env, extra, argv in zip(envs, extras, argvs, strict=True)
    ]
    largest = max(sizes, default=0)
    out = []
    for extra, size in zip(extras, sizes, strict=True):
        if LAYOUT_PADDING_VARIABLE in extra:
            extra = padded(extra, len(extra[LAYOUT_PADDING_VARIABLE]) + largest - size)
        out.append(dict(extra))
    return out


def layout_info(*, unit: str, aslr: bool, hash_seed: bool) -> dict[str, Any]:
    """What a variant's processes had randomised, for its variant info (docs/json-format.md)."""
    return {
        "environment_padding": {
            "variable": LAYOUT_PADDING_VARIABLE,
            "max_bytes": MAX_LAYOUT_PADDING - 1,
            "drawn_per": unit,
            "equalised_across_variants": True,
        },
        "aslr": aslr,
        "random_hash_seed": hash_seed,
    }
