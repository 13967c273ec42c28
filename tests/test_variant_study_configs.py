"""The variant study's configs (issue 53): the CPU design, its GPU overlay at a scale over
100 M parameters, and the decoder presets the schema offers."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
import torch
import yaml
from conftest import HFT2022, REPO
from snakemake.utils import update_config
from transformers import LlamaForCausalLM

from tokstudy.models.clm.model import llama_config
from tokstudy.models.config import CLM_PRESETS, ClmConfig
from tokstudy.tokenizers.registry import family_of
from tokstudy.workflow.plan import plan_study

VARIANTS = REPO / "config" / "predictive_variants.yaml"
GPU_OVERLAY = REPO / "config" / "predictive_variants_gpu.yaml"


def _merged(*paths) -> dict[str, Any]:
    """The configs merged as ``--configfile a b`` merges them, the data at this suite's
    copy of ``../shared``."""
    config: dict[str, Any] = {}
    for path in paths:
        update_config(config, yaml.safe_load(path.read_text()))
    config["data_root"] = str(HFT2022)
    return config


def test_the_schema_offers_every_clm_preset(config_schema: dict) -> None:
    clm = config_schema["properties"]["models"]["properties"]["clm"]["properties"]
    assert clm["preset"]["enum"] == list(CLM_PRESETS)


@pytest.mark.parametrize("vocab_size", [1000, 2000, 4000])
def test_large_has_over_100m_parameters_at_every_size_of_the_design(vocab_size: int) -> None:
    sizes = CLM_PRESETS["large"]
    layers, hidden, ffn = (
        sizes["num_hidden_layers"],
        sizes["hidden_size"],
        sizes["intermediate_size"],
    )
    # by hand: per layer q, k, v, o (4·h²), gate, up, down (3·h·ffn) and two RMS norms;
    # the final norm; one embedding matrix (tied with the output layer)
    expected = layers * (4 * hidden**2 + 3 * hidden * ffn + 2 * hidden) + hidden
    expected += vocab_size * hidden

    class Vocabulary:
        pad_token_id, cls_token_id, sep_token_id = 0, 1, 2

        def __len__(self) -> int:
            return vocab_size

    with torch.device("meta"):
        model = LlamaForCausalLM(llama_config(Vocabulary(), ClmConfig(preset="large")))
    assert sum(p.numel() for p in model.parameters()) == expected
    assert expected > 100_000_000


@pytest.mark.shared
def test_the_variant_design_has_nine_tokenizers_in_each_of_three_families() -> None:
    plan = plan_study(_merged(VARIANTS))
    tokenizers = plan.study.tokenizers
    families = Counter(family_of(plan.tokenizers.algorithm(name)) for name in tokenizers)
    assert len(tokenizers) == 27 and sorted(families.values()) == [9, 9, 9]
    assert sorted(plan.study.config["models"]["tokenizers"]) == sorted(tokenizers)
    assert len(plan.models.section.cells()) == 3 * 27 * 3
    assert (
        plan.models.section.config.seeds == (0, 1)
        and plan.models.section.config.clm.preset == "tiny"
    )


@pytest.mark.shared
def test_the_gpu_overlay_keeps_the_design_and_changes_the_scale_and_data() -> None:
    cpu, gpu = plan_study(_merged(VARIANTS)), plan_study(_merged(VARIANTS, GPU_OVERLAY))
    assert gpu.study.tokenizers == cpu.study.tokenizers
    assert gpu.models.section.cells() == cpu.models.section.cells()
    models = gpu.models.section.config
    assert models.seeds == (0,) and models.clm.preset == "large" and models.clm.device == "cuda"
    assert models.clm.min_tokens_per_parameter == 20 and models.pretokenize_shards == 8
    merged = _merged(VARIANTS, GPU_OVERLAY)
    cell = gpu.models.section.cells()[0]
    assert gpu.tokenizers.train_spec(cell)["max_train_lines"] == 2_000_000
    assert "max_train_lines" not in cpu.tokenizers.train_spec(cell)
    assert merged["corpus_defaults"]["max_lines"] is None  # the CPU study's cap lifted
    assert {
        language: merged["languages"][language]["max_bytes"] for language in ["en", "fi", "mr"]
    } == {
        "en": 10_800_000_000,
        "fi": 11_000_000_000,
        "mr": 25_700_000_000,
    }
