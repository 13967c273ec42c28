"""Model families: what the step code needs of an MLM architecture, one class per family.

A :class:`ModelFamily` builds and pretrains its model, recognises and loads its saved
folders for a downstream task, gives the tokenizer that turns task text into model units
(batches), and scores held-out text. :class:`Bert` uses a subword tokenizer folder;
:class:`CharacterBert` spells whitespace words and keeps its vocabularies in its own
folders (its tokenizer folder is ``None``). The step code picks a family once, with
:func:`family_for_tokenizer` (pretraining) or :func:`family_of_model` (a saved model).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import torch
from transformers import (
    AutoTokenizer,
    BertForMaskedLM,
    BertForSequenceClassification,
    BertForTokenClassification,
)

from tokstudy.errors import TokstudyError
from tokstudy.models import charbert, mlm_scoring
from tokstudy.models.config import PretrainConfig
from tokstudy.models.data import pretokenize as pretokenize_corpus
from tokstudy.models.pretrain import pretrain_bert
from tokstudy.models.task_registry import TASKS
from tokstudy.tokenizers.registry import META_FILE, load_tokenizer

log = logging.getLogger(__name__)

#: the file ``save_pretrained`` writes into every ``transformers`` model folder
BERT_CONFIG_FILE = "config.json"


def load_transformers_tokenizer(directory: Path, *, training: bool = False) -> Any:
    """A ``transformers`` tokenizer from a tokstudy or ``transformers`` tokenizer folder.

    ``training``: the tokenizer of a model's training text, which samples a segmentation on
    every call for a sampling adapter (``bpe_dropout``, ``unigram_sampling``); otherwise the
    deterministic one, which every evaluation reads.
    """
    if training:
        return training_tokenizer(directory)[0]
    directory = Path(directory)
    if (directory / META_FILE).is_file():
        return load_tokenizer(directory).to_transformers()
    if not directory.is_dir():
        raise TokstudyError(f"{directory}: tokenizer folder not found")
    return AutoTokenizer.from_pretrained(directory)


def training_tokenizer(directory: Path) -> tuple[Any, dict[str, Any]]:
    """The ``transformers`` tokenizer of a model's training text from a tokenizer folder, and
    how it samples (:meth:`~tokstudy.tokenizers.base.Tokenizer.sampling_settings`: empty
    unless it does)."""
    directory = Path(directory)
    if (directory / META_FILE).is_file():
        adapter = load_tokenizer(directory)
        return adapter.to_training_transformers(), adapter.sampling_settings()
    return load_transformers_tokenizer(directory), {}


class ModelFamily(Protocol):
    """An MLM architecture as the model-stage steps use it."""

    name: str

    def owns(self, model_dir: Path) -> bool:
        """Whether ``model_dir`` is a saved model of this family."""
        ...

    def pretrain(
        self,
        tokenizer_dir: Path | None,
        corpus_dir: Path,
        out_dir: Path,
        config: PretrainConfig,
        checkpoint_root: Path | None = None,
    ) -> Path:
        """Build a model and pretrain it (one seed); the saved model folder. Reruns resume
        (from ``checkpoint_root/<settings fingerprint>`` when given)."""
        ...

    def load_for_task(self, model_dir: Path, task: str, labels: Sequence[str]) -> Any:
        """A classifier on every token or on the sequence (the task's registered ``head``)
        from a saved MLM."""
        ...

    def task_tokenizer(
        self, model_dir: Path, tokenizer_dir: Path | None, *, training: bool = False
    ) -> Any:
        """The tokenizer that turns task text into the model's units (fine-tuning batches;
        ``training``: of the training split, see :func:`load_transformers_tokenizer`)."""
        ...

    def scorer(
        self, model_dir: Path, tokenizer_dir: Path | None, device: torch.device, bf16: bool
    ) -> Any:
        """An MLM scorer of held-out text (see :func:`tokstudy.models.mlm_scoring.score_lines`)."""
        ...


class Bert:
    """BERT on a subword tokenizer (``transformers`` model folders)."""

    name = "bert"

    def owns(self, model_dir: Path) -> bool:
        """A ``transformers`` model folder."""
        return (Path(model_dir) / BERT_CONFIG_FILE).is_file()

    def pretrain(
        self,
        tokenizer_dir: Path | None,
        corpus_dir: Path,
        out_dir: Path,
        config: PretrainConfig,
        checkpoint_root: Path | None = None,
    ) -> Path:
        """Pretrain on a corpus pre-tokenized with ``tokenizer_dir``'s tokenizer."""
        tokenizer = self.task_tokenizer(out_dir, tokenizer_dir)
        return pretrain_bert(
            tokenizer, corpus_dir, out_dir, config, checkpoint_root=checkpoint_root
        )

    def load_for_task(self, model_dir: Path, task: str, labels: Sequence[str]) -> Any:
        """``BertForTokenClassification`` or ``BertForSequenceClassification``."""
        per_token = TASKS[task].head == "token"
        cls = BertForTokenClassification if per_token else BertForSequenceClassification
        return cls.from_pretrained(
            model_dir,
            num_labels=len(labels),
            id2label=dict(enumerate(labels)),
            label2id={label: i for i, label in enumerate(labels)},
        )

    def task_tokenizer(
        self, model_dir: Path, tokenizer_dir: Path | None, *, training: bool = False
    ) -> Any:
        """The model's subword tokenizer."""
        if tokenizer_dir is None:
            raise TokstudyError(f"{model_dir}: a BERT model needs its tokenizer folder")
        return load_transformers_tokenizer(tokenizer_dir, training=training)

    def scorer(
        self, model_dir: Path, tokenizer_dir: Path | None, device: torch.device, bf16: bool
    ) -> mlm_scoring.BertScorer:
        """Pseudo-log-likelihood over subword tokens."""
        tokenizer = self.task_tokenizer(model_dir, tokenizer_dir)
        model = BertForMaskedLM.from_pretrained(model_dir).to(device)
        return mlm_scoring.BertScorer(
            model,
            tokenizer,
            max_length=model.config.max_position_embeddings,
            device=device,
            bf16=bf16,
        )


class CharacterBert:
    """CharacterBERT: spelled whitespace words, its vocabularies in its own folders."""

    name = "characterbert"

    def owns(self, model_dir: Path) -> bool:
        """A folder with ``charbert.json``."""
        return (Path(model_dir) / charbert.CONFIG_FILE).is_file()

    def pretrain(
        self,
        tokenizer_dir: Path | None,
        corpus_dir: Path,
        out_dir: Path,
        config: PretrainConfig,
        checkpoint_root: Path | None = None,
    ) -> Path:
        """Pretrain on a folder from :func:`tokstudy.models.charbert.prepare_charbert`."""
        return charbert.pretrain_charbert(
            corpus_dir, out_dir, config, checkpoint_root=checkpoint_root
        )

    def load_for_task(
        self, model_dir: Path, task: str, labels: Sequence[str]
    ) -> charbert.CharacterBertForClassification:
        """A classifier on every word (a ``token`` head) or on ``[CLS]``."""
        return charbert.CharacterBertForClassification.from_mlm(
            model_dir, len(labels), per_word=TASKS[task].head == "token"
        )

    def task_tokenizer(
        self, model_dir: Path, tokenizer_dir: Path | None, *, training: bool = False
    ) -> Any:
        """The speller of the model folder: one unit per word (the same for training)."""
        return charbert.SpellingTokenizer(charbert.Speller.load(model_dir))

    def scorer(
        self, model_dir: Path, tokenizer_dir: Path | None, device: torch.device, bf16: bool
    ) -> charbert.CharBertScorer:
        """Pseudo-log-likelihood over words (``[UNK]`` outside the word vocabulary)."""
        model, tokenizer, speller = charbert.load_charbert(model_dir)
        max_length = model.settings["bert"]["max_position_embeddings"]
        return charbert.CharBertScorer(
            model.to(device), tokenizer, speller, max_length=max_length, device=device, bf16=bf16
        )


BERT = Bert()
CHARACTERBERT = CharacterBert()
FAMILIES: tuple[ModelFamily, ...] = (BERT, CHARACTERBERT)


def pretrain(
    tokenizer_dir: Path | None,
    corpus_dir: Path,
    out_dir: Path,
    config: PretrainConfig,
    checkpoint_root: Path | None = None,
) -> Path:
    """Pretrain one model (one seed) of the family of ``tokenizer_dir``: BERT on a corpus
    pre-tokenized with that tokenizer, CharacterBERT without one (rule ``pretrain_mlm``)."""
    family = family_for_tokenizer(tokenizer_dir)
    return family.pretrain(tokenizer_dir, corpus_dir, out_dir, config, checkpoint_root)


def pretokenize_text(
    tokenizer_dir: Path,
    train: Path,
    out_dir: Path,
    whole_word_mask: bool,
    shard: int = 0,
    shards: int = 1,
) -> None:
    """The pre-tokenized corpus of the text ``train`` (or of byte range ``shard`` of
    ``shards``) under the training tokenizer of ``tokenizer_dir``: one sampled
    segmentation per line for a sampling adapter, as its record's ``sampled_segmentation``
    and the log say (rules ``pretokenize_mlm`` and ``pretokenize_shard``)."""
    tokenizer, sampling = training_tokenizer(tokenizer_dir)
    if sampling:
        log.warning(
            "%s: the corpus is one sampled segmentation of each line (%s)%s",
            out_dir,
            ", ".join(f"{key} {value}" for key, value in sampling.items() if key != "seeded"),
            "" if sampling["seeded"] else "; unseeded: another run draws other samples",
        )
    pretokenize_corpus(
        tokenizer,
        train,
        out_dir,
        with_char_spans=whole_word_mask,
        record={"sampled_segmentation": sampling or None},
        shard=(shard, shards),
    )


def family_for_tokenizer(tokenizer_dir: Path | None) -> ModelFamily:
    """The family pretrained with ``tokenizer_dir``: BERT, or CharacterBERT for ``None``."""
    return CHARACTERBERT if tokenizer_dir is None else BERT


def family_of_model(model_dir: Path) -> ModelFamily:
    """The family of a saved model folder; a clear error when no family owns it."""
    for family in FAMILIES:
        if family.owns(model_dir):
            return family
    raise TokstudyError(
        f"{model_dir}: not a model folder (neither {BERT_CONFIG_FILE} nor "
        f"{charbert.CONFIG_FILE} found)"
    )
