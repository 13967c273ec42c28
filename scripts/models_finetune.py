"""Snakemake entry point: fine-tune one model (one seed) on POS tagging or sentences."""

from pathlib import Path

import torch

from tokstudy.models.config import FinetuneConfig, from_mapping
from tokstudy.models.entrypoints import finetune_pos, finetune_sentence
from tokstudy.models.pretrain import MODEL_DIR
from tokstudy.workflow_step import optional_path, run_step

torch.set_num_threads(snakemake.threads)
params = snakemake.params
options = {
    "noise_levels": params.noise_levels,
    "noise_seed": params.noise_seed,
    "noise_word_fraction": params.noise_word_fraction,
}
# a user-supplied sentence dataset comes as inputs tsv_train, tsv_test (, tsv_validation)
tsv = {
    name.removeprefix("tsv_"): Path(path)
    for name, path in snakemake.input.items()
    if name.startswith("tsv_")
}
step, data = finetune_sentence, ()
if snakemake.wildcards.task == "pos":
    step, data = finetune_pos, (Path(snakemake.input.treebank),)
elif tsv:
    options["tsv"] = tsv
else:
    options |= {
        "treebank": Path(snakemake.input.treebank),
        "feature": params.sentence_feature,
        "upos": params.sentence_upos,
    }
run_step(
    snakemake.log[0],
    step,
    Path(snakemake.input.pretrained) / MODEL_DIR,
    optional_path(snakemake.input.tokenizer),
    *data,
    Path(snakemake.output.metrics).parent,
    from_mapping(FinetuneConfig, params.config, "models.finetune"),
    **options,
)
