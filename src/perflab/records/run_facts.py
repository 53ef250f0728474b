"""What a run records beside its samples: the machine it measured on (`MachineInfo`) and each
variant's set-up as measured (`VariantInfo`), the JSON document's `machine` and `variants[].info`.

Both are read back from the store's JSON and written into the JSON document as read: `keys`
keeps the stored object's keys in their order, so a run stored by an older perflab (which
lacks some) is shown byte for byte as before, and `other` keeps what no field names."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any


class _ReadByKey:
    """Reading a fact by its JSON key, as a plain dict: `result.machine["cpu_model"]` and
    `.get("pinned_cpu")` keep working in programs written when these were dicts."""

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError

    def __getitem__(self, key: str) -> Any:
        return self.to_json()[key]

    def __contains__(self, key: object) -> bool:
        return key in self.to_json()

    def get(self, key: str, default: Any = None) -> Any:
        return self.to_json().get(key, default)


@dataclass(frozen=True, kw_only=True)
class MachineInfo(_ReadByKey):
    """The machine a run measured on, as `perflab.machine.host.machine_facts` gathered it when
    the run began (None: not known there, or not stored by the perflab that made the run)."""

    hostname: str | None = None
    cpu_model: str | None = None
    cpu_flags: tuple[str, ...] | None = None
    avx512: bool | None = None
    cores: int | None = None
    hypervisor: bool | None = None
    hypervisor_vendor: str | None = None
    governor: str | None = None  # cpufreq's scaling governor
    boost: str | None = None  # "on", "off", or why it is unknown
    smt: str | None = None
    kernel: str | None = None
    os: str | None = None
    perf_event_paranoid: str | None = None
    aslr: str | None = None  # /proc/sys/kernel/randomize_va_space
    load_average: tuple[float, ...] | None = None  # 1, 5 and 15 minutes
    pinned_cpu: int | None = None  # the measuring CPU; None: not pinned
    perflab_python: str | None = None
    tools: Mapping[str, str | None] | None = None  # each tool's version line; None: missing
    cluster: Mapping[str, Any] | None = None  # a Ray run's cluster: address, nodes, cpus
    reference_ns: float | None = None  # the machine's time for perflab's reference loop
    # what no field names, as stored
    other: Mapping[str, Any] = field(default_factory=dict)
    # the JSON object's keys in order; None: every field that is set, in field order
    keys: tuple[str, ...] | None = None

    @classmethod
    def from_json(cls, facts: Mapping[str, Any]) -> MachineInfo:
        return cls(**_known(cls, facts), other=_unknown(cls, facts), keys=tuple(facts))

    def to_json(self) -> dict[str, Any]:
        return _written(self)


@dataclass(frozen=True, kw_only=True)
class VariantInfo(_ReadByKey):
    """What the lenses and the engine learnt about one variant while measuring it (None: not
    learnt, e.g. a command benchmark has no interpreter)."""

    python_version: str | None = None  # the statement worker's interpreter
    implementation: str | None = None
    executable: str | None = None
    device_synchronised: str | None = None  # what the worker synchronises (a GPU runtime)
    # a git= variant's commit, tree, changes and build, as `git/bundle.py` wrote it
    provenance: Mapping[str, Any] | None = None
    commands: Mapping[str, Any] | None = None  # each command benchmark's executable and layout
    isolated_caches: tuple[str, ...] | None = None  # the cache variables given their own folder
    # what a lens found about the variant, under the lens's name
    instructions: Mapping[str, Any] | None = None  # callgrind's cache geometry, CPU, environment
    memory: Mapping[str, Any] | None = None
    torch: Mapping[str, Any] | None = None  # torch's version and CPU capability
    # what no field names, as stored
    other: Mapping[str, Any] = field(default_factory=dict)
    # the JSON object's keys in order; None: every field that is set, in field order
    keys: tuple[str, ...] | None = None

    @classmethod
    def from_json(cls, info: Mapping[str, Any]) -> VariantInfo:
        return cls(**_known(cls, info), other=_unknown(cls, info), keys=tuple(info))

    @classmethod
    def of_lens(cls, lens: str, facts: Mapping[str, Any]) -> VariantInfo:
        """What one lens found about the variant, under the lens's name (its field)."""
        return cls.from_json({lens: facts})

    def to_json(self) -> dict[str, Any]:
        return _written(self)

    @property
    def commit_provenance(self) -> Mapping[str, Any] | None:
        """The provenance of a variant built from a commit (it names the commit), else None."""
        if isinstance(self.provenance, Mapping) and "commit" in self.provenance:
            return self.provenance
        return None


# the fields every run-facts record has beyond the facts themselves
_BOOKKEEPING = frozenset({"other", "keys"})


def _fact_names(cls: type[Any]) -> list[str]:
    return [f.name for f in fields(cls) if f.name not in _BOOKKEEPING]


def _known(cls: type[Any], stored: Mapping[str, Any]) -> dict[str, Any]:
    """The stored values of `cls`'s fields; JSON arrays become tuples."""
    names = _fact_names(cls)
    return {k: tuple(v) if isinstance(v, list) else v for k, v in stored.items() if k in names}


def _unknown(cls: type[Any], stored: Mapping[str, Any]) -> dict[str, Any]:
    names = _fact_names(cls)
    return {k: v for k, v in stored.items() if k not in names}


def _written(record: MachineInfo | VariantInfo) -> dict[str, Any]:
    """The JSON object: the stored keys in their order, or every set field then `other`."""
    names = _fact_names(type(record))
    keys = record.keys
    if keys is None:
        keys = (*(n for n in names if getattr(record, n) is not None), *record.other)
    out: dict[str, Any] = {}
    for key in keys:
        value = getattr(record, key) if key in names else record.other[key]
        out[key] = list(value) if isinstance(value, tuple) else value
    return out
