"""Presets: other tools' NDCG definitions by name (the registry) and how they apply."""

from fastndcg._presets.apply import RUN_ONLY, accepts_preset, resolve
from fastndcg._presets.registry import (
    EXP2_TABLE,
    PRESETS,
    SETTINGS,
    Preset,
    get_preset,
    presets,
    ranx_gain,
)

__all__ = [
    "EXP2_TABLE",
    "PRESETS",
    "RUN_ONLY",
    "SETTINGS",
    "Preset",
    "accepts_preset",
    "get_preset",
    "presets",
    "ranx_gain",
    "resolve",
]
