import json

from perflab.records.run_facts import MachineInfo, VariantInfo

GATHERED = {
    "hostname": "vm",
    "cpu_model": "AMD EPYC",
    "cpu_flags": ["fpu", "avx512f"],
    "avx512": True,
    "cores": 2,
    "hypervisor": True,
    "hypervisor_vendor": None,
    "governor": None,
    "boost": "unknown",
    "smt": "0",
    "kernel": "6.1.0",
    "os": "Linux",
    "perf_event_paranoid": "2",
    "aslr": "2",
    "load_average": [1.5, 1.0, 0.5],
    "pinned_cpu": 1,
    "perflab_python": "3.11.7",
    "tools": {"perf": "perf version 6.1", "gcc": None},
    "cluster": {"address": "local", "nodes": 2, "cpus": 4},
}


def test_machine_facts_are_read_as_typed_fields() -> None:
    machine = MachineInfo.from_json(GATHERED)
    assert machine.cpu_model == "AMD EPYC" and machine.cores == 2 and machine.pinned_cpu == 1
    assert machine.load_average == (1.5, 1.0, 0.5) and machine.cpu_flags == ("fpu", "avx512f")
    assert machine.cluster == {"address": "local", "nodes": 2, "cpus": 4}


def test_machine_facts_are_written_back_byte_for_byte() -> None:
    assert json.dumps(MachineInfo.from_json(GATHERED).to_json()) == json.dumps(GATHERED)


def test_an_older_stores_facts_keep_their_keys_order_and_what_no_field_names() -> None:
    stored = {"kernel": "5.4", "cpu_model": "Xeon", "writer": 3}
    machine = MachineInfo.from_json(stored)
    assert machine.cores is None and machine.other == {"writer": 3}
    assert json.dumps(machine.to_json()) == json.dumps(stored)
    assert MachineInfo.from_json({}).to_json() == {}


def test_facts_made_in_code_write_the_fields_that_are_set() -> None:
    machine = MachineInfo(cpu_model="test CPU", cores=2, pinned_cpu=None)
    assert machine.to_json() == {"cpu_model": "test CPU", "cores": 2}


def test_variant_info_keeps_what_the_lenses_wrote() -> None:
    stored = {
        "isolated_caches": ["XDG_CACHE_HOME"],
        "python_version": "3.12.1",
        "instructions": {"cpu": 3},
        "some_new_fact": 1,
    }
    info = VariantInfo.from_json(stored)
    assert info.python_version == "3.12.1" and info.isolated_caches == ("XDG_CACHE_HOME",)
    assert info.instructions == {"cpu": 3} and info.other == {"some_new_fact": 1}
    assert json.dumps(info.to_json()) == json.dumps(stored)


def test_only_a_commits_provenance_is_a_commit_provenance() -> None:
    built = VariantInfo(provenance={"commit": "abc", "tree": "def"})
    assert built.commit_provenance == {"commit": "abc", "tree": "def"}
    assert VariantInfo(provenance={"build": "make"}).commit_provenance is None
    assert VariantInfo().commit_provenance is None


def test_facts_still_read_by_key_as_when_they_were_dicts() -> None:
    machine = MachineInfo.from_json({"cpu_model": "AMD EPYC", "pinned_cpu": 1, "extra": "x"})
    assert machine["cpu_model"] == "AMD EPYC" and machine.get("pinned_cpu") == 1
    assert machine["extra"] == "x" and "extra" in machine and "cores" not in machine
    assert machine.get("cores", "?") == "?"
    info = VariantInfo.from_json({"python_version": "3.11.7"})
    assert info["python_version"] == "3.11.7" and info.get("executable") is None


def test_a_lens_files_its_variant_facts_under_its_own_name() -> None:
    info = VariantInfo.of_lens("memory", {"repeats": 2})
    assert info.memory == {"repeats": 2} and info.to_json() == {"memory": {"repeats": 2}}
    # facts made in code: the fields set, in field order, as the lenses wrote their dicts
    made = VariantInfo(python_version="3.12", executable="/usr/bin/python3")
    assert list(made.to_json()) == ["python_version", "executable"]
