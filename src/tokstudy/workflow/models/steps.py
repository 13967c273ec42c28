"""Steps of ``workflow/rules/models.smk``: BERT / CharacterBERT pretraining, MLM evaluation,
fine-tuning, causal-LM training and scoring, and the model tables.

The model jobs use as many torch threads as the rule gives the job. A tokenizer input
left empty means CharacterBERT, which keeps its vocabularies in its corpus folder.
"""

from __future__ import annotations

import logging
from pathlib import Path

import torch

from tokstudy.models import study_tables
from tokstudy.models.charbert import prepare_charbert
from tokstudy.models.clm.scoring import score_clm
from tokstudy.models.config import (
    CharBertConfig,
    ClmConfig,
    EvalConfig,
    FinetuneConfig,
    PretrainConfig,
    from_mapping,
)
from tokstudy.models.data import merge_corpora, pretokenize
from tokstudy.models.family import (
    family_for_tokenizer,
    training_tokenizer,
)
from tokstudy.models.pretrain import MODEL_DIR
from tokstudy.models.silver import make_silver_treebank
from tokstudy.models.task_registry import TASKS
from tokstudy.workflow.dispatch import optional_path, run_step
from tokstudy.workflow.snakemake_job import Snakemake
from tokstudy.workflow.training_state import checkpoint_root

log = logging.getLogger(__name__)


def silver_treebank(snakemake: Snakemake) -> None:
    """A silver-label (HanTa-tagged) CoNLL-U treebank of one language."""
    run_step(
        snakemake.log[0],
        make_silver_treebank,
        Path(snakemake.input.train),
        Path(snakemake.input.heldout),
        Path(snakemake.output[0]),
        name=f"{snakemake.wildcards.language}_silver",
        seed=snakemake.params.seed,
    )


def _pretokenize_step(snakemake: Snakemake, **shard: tuple[int, int]) -> None:
    """The step of both pre-tokenization rules (``shard``: its index and count, if any)."""
    run_step(
        snakemake.log[0],
        _pretokenize,
        Path(snakemake.input.tokenizer),
        Path(snakemake.input.train),
        Path(snakemake.output[0]),
        whole_word_mask=snakemake.params.whole_word_mask,
        **shard,
    )


def pretokenize_mlm(snakemake: Snakemake) -> None:
    """Tokenize a training text once for MLM pretraining (shared by every seed)."""
    _pretokenize_step(snakemake)


def pretokenize_shard(snakemake: Snakemake) -> None:
    """Tokenize one byte range (shard ``{shard}`` of ``params.shards``) of a training text."""
    _pretokenize_step(snakemake, shard=(int(snakemake.wildcards.shard), snakemake.params.shards))


def merge_pretokenized(snakemake: Snakemake) -> None:
    """Join a training text's pretokenized shards into its one corpus."""
    run_step(
        snakemake.log[0],
        merge_corpora,
        [Path(path) for path in snakemake.input],
        Path(snakemake.output[0]),
    )


def _pretokenize(
    tokenizer_dir: Path,
    text: Path,
    out_dir: Path,
    *,
    whole_word_mask: bool,
    shard: tuple[int, int] = (0, 1),
) -> None:
    """The pre-tokenized corpus of ``text`` (or of its ``shard``) under the tokenizer
    folder's training tokenizer (one sampled segmentation per line for a sampling adapter:
    its record's ``sampled_segmentation`` and the log say so)."""
    tokenizer, sampling = training_tokenizer(tokenizer_dir)
    if sampling:
        log.warning(
            "%s: the corpus is one sampled segmentation of each line (%s)%s",
            out_dir,
            ", ".join(f"{key} {value}" for key, value in sampling.items() if key != "seeded"),
            "" if sampling["seeded"] else "; unseeded: another run draws other samples",
        )
    pretokenize(
        tokenizer,
        text,
        out_dir,
        with_char_spans=whole_word_mask,
        record={"sampled_segmentation": sampling or None},
        shard=shard,
    )


def prepare_characterbert(snakemake: Snakemake) -> None:
    """CharacterBERT's vocabularies and word corpus of a training text."""
    run_step(
        snakemake.log[0],
        prepare_charbert,
        Path(snakemake.input.train),
        Path(snakemake.output[0]),
        from_mapping(CharBertConfig, snakemake.params.config, "models.characterbert"),
    )


def pretrain_mlm(snakemake: Snakemake) -> None:
    """Pretrain one BERT, or a CharacterBERT without a tokenizer input (one seed)."""
    torch.set_num_threads(snakemake.threads)
    tokenizer_dir = optional_path(snakemake.input.tokenizer)
    run_step(
        snakemake.log[0],
        family_for_tokenizer(tokenizer_dir).pretrain,
        tokenizer_dir,
        Path(snakemake.input.corpus),
        Path(snakemake.output[0]),
        from_mapping(PretrainConfig, snakemake.params.config, "models.pretrain"),
        checkpoint_root(snakemake.params.checkpoints, snakemake.params.code),
    )


def evaluate_mlm(snakemake: Snakemake) -> None:
    """MLM metrics of one model on clean and noised held-out text, and the noise edits."""
    torch.set_num_threads(snakemake.threads)
    run_step(
        snakemake.log[0],
        TASKS["mlm"].function(),
        Path(snakemake.input.pretrained) / MODEL_DIR,
        optional_path(snakemake.input.tokenizer),
        Path(snakemake.input.heldout),
        Path(snakemake.output.metrics),
        from_mapping(EvalConfig, snakemake.params.config, "models.evaluation"),
        edits_tsv=Path(snakemake.output.edits),
    )


def finetune_model(snakemake: Snakemake) -> None:
    """Fine-tune one model (one seed) on task ``{task}`` with its registered function.

    Data: the input ``treebank``, or a user-supplied dataset, inputs ``tsv_train``,
    ``tsv_test`` (and ``tsv_validation``). A task with a ``sequence`` head labels treebank
    sentences by ``params.sentence_feature`` on words of ``params.sentence_upos``.
    """
    torch.set_num_threads(snakemake.threads)
    params = snakemake.params
    tsv = {
        name.removeprefix("tsv_"): Path(path)
        for name, path in snakemake.input.items()
        if name.startswith("tsv_")
    }
    task = TASKS[snakemake.wildcards.task]
    data = {"tsv": tsv} if tsv else {"treebank": Path(snakemake.input.treebank)}
    if task.head == "sequence" and not tsv:
        data |= {"feature": params.sentence_feature, "upos": params.sentence_upos}
    run_step(
        snakemake.log[0],
        task.function(),
        Path(snakemake.input.pretrained) / MODEL_DIR,
        optional_path(snakemake.input.tokenizer),
        Path(snakemake.output.metrics).parent,
        from_mapping(FinetuneConfig, params.config, "models.finetune"),
        **data,
        noise_levels=params.noise_levels,
        noise_seed=params.noise_seed,
        noise_word_fraction=params.noise_word_fraction,
    )


def train_clm(snakemake: Snakemake) -> None:
    """Train the causal LM of one cell and seed (task ``clm``); reruns resume."""
    torch.set_num_threads(snakemake.threads)
    run_step(
        snakemake.log[0],
        TASKS["clm"].function(),
        Path(snakemake.input.tokenizer),
        Path(snakemake.input.corpus),
        Path(snakemake.input.train),
        Path(snakemake.output[0]),
        from_mapping(ClmConfig, snakemake.params.config, "models.clm"),
        checkpoint_root=checkpoint_root(snakemake.params.checkpoints, snakemake.params.code),
    )


def evaluate_clm(snakemake: Snakemake) -> None:
    """Bits per byte of one causal LM on clean and noised held-out text, beside the
    unigram baseline."""
    torch.set_num_threads(snakemake.threads)
    params = snakemake.params
    run_step(
        snakemake.log[0],
        score_clm,
        Path(snakemake.input.trained) / MODEL_DIR,
        Path(snakemake.input.tokenizer),
        Path(snakemake.input.corpus),
        Path(snakemake.input.heldout),
        Path(snakemake.output.scores),
        from_mapping(ClmConfig, params.config, "models.clm"),
        noise_levels=params.noise_levels,
        noise_seed=params.noise_seed,
        noise_word_fraction=params.noise_word_fraction,
    )


def summarize_models(snakemake: Snakemake) -> None:
    """The model stage's results table, statistics tables and noise plot."""
    params = snakemake.params
    run_step(
        snakemake.log[0],
        study_tables.summarize_models,
        {Path(path): keys for path, keys in params.mlm.items()},
        {Path(path): keys for path, keys in params.finetune.items()},
        {Path(path): keys for path, keys in params.predictions.items()},
        {Path(path): keys for path, keys in params.clm.items()},
        Path(snakemake.output.results).parent,
        [Path(snakemake.output.png), Path(snakemake.output.pdf)],
        from_mapping(EvalConfig, params.evaluation, "models.evaluation"),
    )
