"""Holm, Bonferroni and Benjamini-Hochberg: hand-computed values, statsmodels, families."""

from __future__ import annotations

import numpy as np
import pytest
from compare_data import result

import fastndcg
from fastndcg._compare.multitest import adjust

# ---- corrections ----------------------------------------------------------------------
P = np.array([0.01, 0.04, 0.03, 0.005])
# by hand, m = 4:
#   Bonferroni: 4p                                   -> 0.04, 0.16, 0.12, 0.02
#   Holm: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04,
#         running max 0.02, 0.03, 0.06, 0.06          -> 0.03, 0.06, 0.06, 0.02
#   BH: sorted p * 4 / rank = 0.02, 0.02, 0.04, 0.04, running min from the top (same)
#                                                     -> 0.02, 0.04, 0.04, 0.02
HAND = {
    "bonferroni": [0.04, 0.16, 0.12, 0.02],
    "holm": [0.03, 0.06, 0.06, 0.02],
    "bh": [0.02, 0.04, 0.04, 0.02],
    None: [0.01, 0.04, 0.03, 0.005],
}


@pytest.mark.parametrize("method", list(HAND))
def test_adjustments_equal_hand_computations(method):
    np.testing.assert_allclose(adjust(P, method), HAND[method], rtol=1e-15)


def test_adjustments_cap_at_one_and_skip_nan():
    p = np.array([0.5, np.nan, 0.4, 0.9])
    # m = 3 (the NaN is left out): Bonferroni 1.5 -> 1, 1.2 -> 1, 2.7 -> 1
    np.testing.assert_array_equal(adjust(p, "bonferroni"), [1.0, np.nan, 1.0, 1.0])
    # Holm: sorted 0.4, 0.5, 0.9 times 3, 2, 1 = 1.2 -> 1, 1.0, 0.9 -> running max 1, 1, 1
    np.testing.assert_array_equal(adjust(p, "holm"), [1.0, np.nan, 1.0, 1.0])
    # BH: 0.4 * 3 / 1 = 1.2 -> 1, 0.5 * 3 / 2 = 0.75, 0.9 * 3 / 3 = 0.9; min from the top
    np.testing.assert_allclose(adjust(p, "bh"), [0.75, np.nan, 0.75, 0.9])
    assert np.isnan(adjust(np.array([np.nan]), "holm")).all()


@pytest.mark.parametrize("method", ["holm", "bonferroni", "bh"])
def test_adjustments_agree_with_statsmodels(method):
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    names = {"holm": "holm", "bonferroni": "bonferroni", "bh": "fdr_bh"}
    p = np.random.default_rng(1).uniform(0, 0.2, 25)
    expected = multitest.multipletests(p, method=names[method])[1]
    np.testing.assert_allclose(adjust(p, method), expected, rtol=1e-12)


def test_correction_family_is_each_cutoff():
    rng = np.random.default_rng(5)
    base = rng.uniform(0, 1, (80, 2))
    runs = {
        "a": result(base, k=(5, 10)),
        "b": result(np.clip(base + rng.normal(0.05, 0.1, (80, 2)), 0, 1), k=(5, 10)),
        "c": result(np.clip(base + rng.normal(0.02, 0.1, (80, 2)), 0, 1), k=(5, 10)),
    }
    comparison = fastndcg.compare(runs, test="t", correction="holm")
    assert [r["cutoff"] for r in comparison.rows] == [5, 5, 5, 10, 10, 10]
    for k in (5, 10):
        family = [r for r in comparison.rows if r["cutoff"] == k]
        raw = np.array([r["p_value"] for r in family])
        expected = adjust(raw, "holm")
        assert [r["p_adjusted"] for r in family] == list(expected)
        assert [r["significant"] for r in family] == list(expected <= 0.05)
