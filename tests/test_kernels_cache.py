"""The Numba cache holds kernels compiled with the current integer codes of fastndcg._codes."""

from __future__ import annotations

import pytest

from fastndcg import _codes as C

pytestmark = pytest.mark.numba


def test_compiled_codes_match_the_source():
    from fastndcg._kernels import compiled_codes

    expected = (
        C.TIE_AVERAGE,
        C.TIE_STABLE,
        C.TIE_PESSIMISTIC,
        C.TIE_OPTIMISTIC,
        C.TIE_RANDOM,
        C.TIE_KEY,
        C.GAIN_EXP2,
        C.GAIN_LINEAR,
        C.IDEAL_GLOBAL,
        C.IDEAL_LOCAL,
        C.IDEAL_MAX,
    )
    assert compiled_codes() == expected, (
        "the Numba cache was compiled with other values of fastndcg._codes: delete "
        "fastndcg/__pycache__/*.nbi and *.nbc"
    )
