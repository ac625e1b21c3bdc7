"""The CLI's PERAS commands are named by the study (`judgelab peras judge|confidence|metrics`); the
old names still run the same command after one line saying so."""

from __future__ import annotations

import pandas as pd
import pytest

from judgelab.cli import main
from judgelab.data.imported import ImportReading
from judgelab.data.prepare import build_trec_table
from judgelab.data.tables import read_dataset, write_dataset
from judgelab.studies.peras import jobs as stages


def perfect_judge(fixtures, tmp_path):
    """The fixture dataset and an imported judge that gives every pair its human grade (confidence
    90): kappa, QWK and macro F1 are 1 by definition."""
    fx = fixtures / "trec"
    pairs = tmp_path / "fx.tsv"
    write_dataset(build_trec_table("fx", fx / "qrels.txt", fx / "topics.txt", fx / "texts.tsv"), pairs)
    table = read_dataset(pairs)
    src = tmp_path / "perfect.qrels"
    src.write_text("".join(f"{r.qid} Q0 {r.docid} {int(r.grade)} 90\n" for r in table.itertuples()))
    out = {"judgments": str(tmp_path / "j.tsv"), "confidence": str(tmp_path / "c.tsv")}
    stages.import_job(str(pairs), str(src), out, ImportReading("graded"), {})
    return pairs, out, len(table)


def metrics_of(stdout: str) -> dict[str, str]:
    return dict(line.split(None, 1) for line in stdout.strip().splitlines())


def test_peras_metrics_and_its_deprecated_name(fixtures, tmp_path, capsys):
    pairs, out, n = perfect_judge(fixtures, tmp_path)
    assert main(["peras", "metrics", str(pairs), out["judgments"], out["confidence"]]) == 0
    new = capsys.readouterr()
    got = metrics_of(new.out)
    assert float(got["kappa"]) == float(got["qwk"]) == float(got["macro_f1"]) == 1.0
    assert float(got["n_pairs"]) == float(got["n_parsed"]) == n and new.err == ""
    assert main(["metrics", str(pairs), out["judgments"], out["confidence"]]) == 0
    old = capsys.readouterr()
    assert old.out == new.out  # the same command
    assert old.err.splitlines() == [
        "judgelab: `judgelab metrics` is deprecated, use `judgelab peras metrics` (same arguments)"
    ]


def test_the_old_names_are_not_commands_of_their_own(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    listed = capsys.readouterr().out
    assert "peras" in listed and "{download,prepare,peras," in listed
    for old in ("judge", "confidence", "metrics"):
        assert f",{old}," not in listed and f"{{{old}," not in listed


@pytest.mark.slow
def test_peras_judge_then_confidence_with_the_embedded_model(fixtures, tmp_path, capsys):
    """`judgelab peras judge` and `confidence` on the 8-pair fixture with the embedded model; the
    deprecated `judgelab judge` asks the same requests (every answer from the cache)."""
    pairs, _, n = perfect_judge(fixtures, tmp_path)
    cache = str(tmp_path / "cache" / "requests.sqlite")
    j, c = tmp_path / "judged.tsv", tmp_path / "conf.tsv"
    args = [str(pairs), "--template", "peras/wo_cot", "--max-tokens", "4", "--cache", cache]
    assert main(["peras", "judge", *args, "--out", str(j)]) == 0
    judged = pd.read_csv(j, sep="\t", dtype={"qid": str, "docid": str})
    assert len(judged) == n and not judged["cache_hit"].any()
    assert main(["peras", "confidence", str(pairs), str(j), "--cache", cache, "--out", str(c)]) == 0
    conf = pd.read_csv(c, sep="\t", dtype={"qid": str, "docid": str})
    assert len(conf) == n and conf["asked"].sum() == judged["parsed"].sum()
    again = tmp_path / "again.tsv"
    capsys.readouterr()
    assert main(["judge", *args, "--out", str(again)]) == 0
    assert "deprecated, use `judgelab peras judge`" in capsys.readouterr().err
    rerun = pd.read_csv(again, sep="\t", dtype={"qid": str, "docid": str})
    assert rerun["cache_hit"].all()
    pd.testing.assert_series_equal(rerun["answer"], judged["answer"])
