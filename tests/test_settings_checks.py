"""The settings dataclasses check their fields from one declaration (``setting``)."""

from __future__ import annotations

import pytest

from tokstudy.errors import TokstudyError
from tokstudy.models.config import FinetuneConfig, ModelsConfig
from tokstudy.nmt.config import NMTConfig
from tokstudy.training.config import from_mapping


@pytest.mark.parametrize(
    ("cls", "where", "section", "message"),
    [
        (
            ModelsConfig,
            "models",
            {"finetune": {"epochs": 0}},
            "models.finetune.epochs must be >= 1, got 0",
        ),
        (
            ModelsConfig,
            "models",
            {"pretrain": {"max_length": 3}},
            "models.pretrain.max_length must be >= 4, got 3",
        ),
        (
            ModelsConfig,
            "models",
            {"pretrain": {"mlm_probability": 1.0}},
            "models.pretrain.mlm_probability must be in (0, 1), got 1.0",
        ),
        (
            ModelsConfig,
            "models",
            {"evaluation": {"noise_word_fraction": 0.0}},
            "models.evaluation.noise_word_fraction must be in (0, 1], got 0.0",
        ),
        (
            ModelsConfig,
            "models",
            {"characterbert": {"highway_layers": -1}},
            "models.characterbert.highway_layers must be >= 0, got -1",
        ),
        (
            ModelsConfig,
            "models",
            {"finetune": {"device": "tpu"}},
            "models.finetune.device must be one of auto, cpu, cuda, got 'tpu'",
        ),
        (
            NMTConfig,
            "nmt",
            {"train": {"label_smoothing": 1.0}},
            "nmt.train.label_smoothing must be in [0, 1), got 1.0",
        ),
        (
            NMTConfig,
            "nmt",
            {"decode": {"max_length_a": -1.0}},
            "nmt.decode.max_length_a must be >= 0, got -1.0",
        ),
        (NMTConfig, "nmt", {"split": {"dev_size": 0}}, "nmt.split.dev_size must be >= 1, got 0"),
        (
            NMTConfig,
            "nmt",
            {"evaluation": {"significance_level": 1.0}},
            "nmt.evaluation.significance_level must be in (0, 1), got 1.0",
        ),
    ],
)
def test_a_value_out_of_its_declared_range_is_a_one_line_error(
    cls: type, where: str, section: dict, message: str
) -> None:
    with pytest.raises(TokstudyError) as error:
        from_mapping(cls, section, where)
    assert str(error.value) == message


def test_declared_defaults_are_within_their_ranges() -> None:
    assert FinetuneConfig().epochs == 3
    assert from_mapping(ModelsConfig, {}, "models") == ModelsConfig()
    assert from_mapping(NMTConfig, {}, "nmt") == NMTConfig()
