import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score, f1_score

from judgelab.studies.peras.metrics import agreement, job_metrics, sakai


def test_sakai_appendix_c_toy_example():
    # PERAS, Appendix C, Table 9: docs a-e, (truth, predicted, confidence)
    truth = [3, 2, 1, 0, 2]
    pred = [3, 2, 2, 0, 0]
    conf = [0.90, 0.60, 0.85, 0.40, 0.30]
    out = sakai([t == p for t, p in zip(truth, pred)], conf)
    assert out["RO"] == pytest.approx(0.425, abs=1e-3)
    assert out["RU"] == pytest.approx(0.633, abs=1e-3)
    assert out["HMR"] == pytest.approx(0.508, abs=1e-3)


def test_sakai_edge_cases():
    assert sakai([True, True], [1.0, 1.0]) == {"RO": 1.0, "RU": 1.0, "HMR": 1.0}  # no incorrect
    assert sakai([False], [1.0]) == {"RO": 0.0, "RU": 1.0, "HMR": 0.0}  # no correct
    both_zero = sakai([True, False], [0.0, 1.0])
    assert both_zero == {"RO": 0.0, "RU": 0.0, "HMR": 0.0}
    with pytest.raises(ValueError):
        sakai([True], [1.5])


def test_agreement_matches_sklearn():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 4, 200)
    yhat = np.clip(y + rng.integers(-1, 2, 200), 0, 3)
    out = agreement(y, yhat)
    assert out["kappa"] == pytest.approx(cohen_kappa_score(y, yhat))
    assert out["qwk"] == pytest.approx(cohen_kappa_score(y, yhat, weights="quadratic"))
    assert out["macro_f1"] == pytest.approx(f1_score(y, yhat, average="macro"))


def test_job_metrics_counts_missing_labels_and_never_grades_them():
    pairs = pd.DataFrame(
        {
            "grade": [3, 2, 1, 0, 2, 1],
            "label": pd.array([3, 2, 2, 0, 0, None], dtype="Int64"),
            "confidence": pd.array([90, 60, 85, 40, 30, None], dtype="Float64"),
        }
    )
    out = job_metrics(pairs)
    assert out["n_pairs"] == 6 and out["n_parsed"] == 5
    assert out["coverage"] == pytest.approx(5 / 6)
    # the missing answer is left out, so the parsed five are exactly Appendix C's example
    assert out["HMR"] == pytest.approx(0.508, abs=1e-3)
    assert out["kappa"] == pytest.approx(
        cohen_kappa_score([3, 2, 1, 0, 2], [3, 2, 2, 0, 0], labels=[0, 1, 2, 3])
    )


def test_job_metrics_with_nothing_parsed_is_nan_not_an_error():
    pairs = pd.DataFrame(
        {
            "grade": [1, 2],
            "label": pd.array([None, None], dtype="Int64"),
            "confidence": pd.array([None, None], dtype="Float64"),
        }
    )
    out = job_metrics(pairs)
    assert out["coverage"] == 0 and math.isnan(out["kappa"]) and math.isnan(out["HMR"])
