"""The machine's GPUs as nvidia-smi and torch see them (machine/gpu.py): parsed, and doctor's
checks of them with the tools scripted."""

from __future__ import annotations

from perflab.machine.fake_processes import FakeRunner as ScriptedRunner
from perflab.machine.gpu import cuda_version_of, gpu_checks, parse_gpu_query
from perflab.records.checks import Status

# nvidia-smi's query and header lines, in the form its CSV query and its table print them
QUERY_LINES = "0, NVIDIA H100 80GB HBM3, 550.54.15, 81559 MiB\n"
SMI_HEADER = (
    "+-----------------------------------------------------------------------------------------+\n"
    "| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |\n"
)


def test_no_gpu_is_said_plainly_and_asks_no_tool() -> None:
    runner = ScriptedRunner()  # any process started would fail the test
    (check,) = gpu_checks(runner, None, torch_present=True)
    assert check.status is Status.INFO and "no NVIDIA GPU" in check.detail
    assert runner.calls == []


def test_each_gpu_is_named_with_its_driver_and_cuda_and_whether_torch_sees_it() -> None:
    runner = (
        ScriptedRunner()
        .on_run(r"nvidia-smi --query-gpu", stdout=QUERY_LINES)
        .on_run(r"nvidia-smi$", stdout=SMI_HEADER)
        .on_run(r"import torch", stdout="2.11.0+cu128\n12.8\nTrue\n1\n")
    )
    gpu, torch_check = gpu_checks(runner, "/usr/bin/nvidia-smi", torch_present=True)
    assert gpu.name == "GPU 0" and gpu.status is Status.OK
    assert gpu.detail == "NVIDIA H100 80GB HBM3, 81559 MiB, driver 550.54.15, CUDA 12.4"
    assert torch_check.status is Status.OK and "sees 1 GPU" in torch_check.detail


def test_a_torch_that_cannot_see_the_gpu_is_a_warning_with_the_fix() -> None:
    runner = (
        ScriptedRunner()
        .on_run(r"nvidia-smi --query-gpu", stdout=QUERY_LINES)
        .on_run(r"nvidia-smi$", stdout=SMI_HEADER)
        .on_run(r"import torch", stdout="2.13.0+cpu\nNone\nFalse\n0\n")
    )
    _, torch_check = gpu_checks(runner, "/usr/bin/nvidia-smi", torch_present=True)
    assert torch_check.status is Status.WARNING and torch_check.fix
    assert "does not see the GPU" in torch_check.detail


def test_gpu_query_lines_parse_and_others_are_skipped() -> None:
    text = QUERY_LINES + "1, NVIDIA H200, 560.35.03, 143771 MiB\nNo devices were found\n"
    assert [gpu.name for gpu in parse_gpu_query(text)] == ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]
    assert cuda_version_of(SMI_HEADER) == "12.4" and cuda_version_of("") is None


def test_an_nvidia_smi_that_lists_no_gpu_is_a_warning_naming_what_it_said() -> None:
    runner = ScriptedRunner().on_run(r"--query-gpu", returncode=9, stderr="NVIDIA-SMI has failed")
    (check,) = gpu_checks(runner, "/usr/bin/nvidia-smi", torch_present=True)
    assert check.status is Status.WARNING
    assert check.detail == "nvidia-smi found no GPU: NVIDIA-SMI has failed"


def test_without_torch_in_perflabs_python_the_variants_own_is_what_counts() -> None:
    runner = (
        ScriptedRunner()
        .on_run(r"nvidia-smi --query-gpu", stdout=QUERY_LINES)
        .on_run(r"nvidia-smi$", returncode=1)
    )
    gpu, torch_check = gpu_checks(runner, "/usr/bin/nvidia-smi", torch_present=False)
    assert gpu.detail.endswith("driver 550.54.15")  # no CUDA version: the header failed
    assert torch_check.status is Status.INFO and "variant's own torch" in torch_check.detail
