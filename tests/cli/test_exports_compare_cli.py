"""Through the command line: a run's exports agree with each other (hyperfine's fields are the
runs as measured, perflab's estimate is named as such), and `perflab compare` takes the run's
JSON document where it takes a run id (pyperf's compare_to habit)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from perflab.cli.main import main
from tests.support.cli_commands import perflab
from tests.support.exports_agreement import check_exports_agree


@pytest.mark.integration
def test_exports_agree_and_compare_takes_the_json_document(tmp_path: Path) -> None:
    done = perflab(
        "--runs", "5", "--warmup", "1", "--budget", "1",
        "--export-csv", "h.csv", "--export-hyperfine-json", "h.json",
        "--json", "r.json", "--samples", "sleep 0.001", "true",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "baseline, variant, ratio: one estimator" in " ".join(done.stdout.split())
    document = json.loads((tmp_path / "r.json").read_text())
    raw = {
        name: [
            s["value"] / s["loops"] / 1e9
            for s in document["samples"]
            if s["variant"] == name and s["name"] == "wall_ns" and not s["warmup"]
        ]
        for name in ("cmd1", "cmd2")
    }
    assert all(len(times) == 5 for times in raw.values())
    hyperfine = json.loads((tmp_path / "h.json").read_text())["results"]
    check_exports_agree(hyperfine, (tmp_path / "h.csv").read_text(), document, raw)

    # a run id against its own document (the same samples: every ratio 1)
    compared = perflab("compare", "1", "r.json", "--json", "c.json", cwd=tmp_path)
    assert compared.returncode == 0, compared.stderr
    result = json.loads((tmp_path / "c.json").read_text())
    assert [c["ratio"] for c in result["comparisons"]] == [1.0, 1.0]
    assert [c["variant"] for c in result["comparisons"]] == ["r.json:cmd1", "r.json:cmd2"]
    assert result["differences"] == ["run 1 and r.json, measured apart"]


def test_compare_refuses_a_document_without_samples_or_a_missing_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    capture = Path(__file__).parents[1] / "golden" / "data" / "runs" / "gzip_preempted.json"
    document = json.loads(capture.read_text())
    (tmp_path / "a.json").write_text(json.dumps(document))
    (tmp_path / "bare.json").write_text(json.dumps({**document, "samples": None}))
    assert main(["compare", "a.json", "bare.json"]) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert "bare.json has no raw samples" in said and "--json FILE --samples" in said
    assert main(["compare", "a.json", "gone.json"]) == 2
    assert "no file gone.json" in capsys.readouterr().err
    (tmp_path / "h.json").write_text(json.dumps({"results": []}))  # hyperfine's, not perflab's
    assert main(["compare", "h.json", "a.json"]) == 2
    assert "not a perflab JSON document" in capsys.readouterr().err
    one = {**document, "variants": document["variants"][:1], "benchmarks": [{"name": "other"}]}
    (tmp_path / "one.json").write_text(json.dumps(one))
    assert main(["compare", "a.json", "one.json"]) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert "share no benchmark (a.json: gzip -1 -c data.txt vs gzip -3" in said
    assert "; one.json: other)" in said
    # two files: no store is opened, and the document compared with itself is an A/A
    assert main(["compare", "a.json", "a.json", "--json", "c.json", "--samples"]) == 0
    result = json.loads((tmp_path / "c.json").read_text())
    assert [c["ratio"] for c in result["comparisons"]] == [1.0, 1.0]
    assert not (tmp_path / ".perflab").exists()
    # a compare document's samples are relabelled: refused, not compared as empty
    assert main(["compare", "a.json", "c.json"]) == 2
    assert "a `perflab compare` document?" in capsys.readouterr().err
