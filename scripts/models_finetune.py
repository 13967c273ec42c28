"""Snakemake entry point: fine-tune one model (one seed) on POS tagging or sentences."""

from pathlib import Path

import torch

from tokstudy.models.config import FinetuneConfig, from_mapping
from tokstudy.models.entrypoints import finetune_pos, finetune_sentence
from tokstudy.models.pretrain import MODEL_DIR
from tokstudy.workflow_step import run_step

torch.set_num_threads(snakemake.threads)
params = snakemake.params
noise = {
    "noise_levels": params.noise_levels,
    "noise_seed": params.noise_seed,
    "noise_word_fraction": params.noise_word_fraction,
}
if snakemake.wildcards.task == "sentence":
    noise |= {
        "treebank": Path(snakemake.input.treebank),
        "feature": params.sentence_feature,
        "upos": params.sentence_upos,
    }
    step, data = finetune_sentence, ()
else:
    step, data = finetune_pos, (Path(snakemake.input.treebank),)
run_step(
    snakemake.log[0],
    step,
    Path(snakemake.input.pretrained) / MODEL_DIR,
    Path(snakemake.input.tokenizer),
    *data,
    Path(snakemake.output.metrics).parent,
    from_mapping(FinetuneConfig, params.config, "models.finetune"),
    **noise,
)
