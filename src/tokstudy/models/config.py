"""Typed settings of the model stage, read from the ``models:`` section of the config.

Every dataclass here is built with :func:`tokstudy.training.config.from_mapping`, which
rejects unknown keys and wrong types with a one-line :class:`~tokstudy.errors.TokstudyError`
naming the key (re-exported here with ``to_dict`` for the workflow's model rules).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from tokstudy.errors import TokstudyError
from tokstudy.models.task_registry import task_names, tasks_of_kind
from tokstudy.tokenizers.base import SPECIAL_TOKENS
from tokstudy.training.config import (
    DeviceSettings,
    RunSettings,
    Settings,
    choice,
    learning_rate,
    proportion,
    setting,
)
from tokstudy.training.config import from_mapping as from_mapping
from tokstudy.training.config import to_dict as to_dict
from tokstudy.training.distributed import check_divisible

#: a clm scale's name (a path part and a table value)
SCALE_NAME = re.compile(r"[a-z][a-z0-9_]*")

#: BERT sizes: layers, hidden size, attention heads, feed-forward size
PRESETS: dict[str, dict[str, int]] = {
    "tiny": {
        "num_hidden_layers": 2,
        "hidden_size": 128,
        "num_attention_heads": 2,
        "intermediate_size": 512,
    },
    "small": {
        "num_hidden_layers": 4,
        "hidden_size": 256,
        "num_attention_heads": 4,
        "intermediate_size": 1024,
    },
    "base": {
        "num_hidden_layers": 12,
        "hidden_size": 768,
        "num_attention_heads": 12,
        "intermediate_size": 3072,
    },
}


@dataclass(frozen=True)
class CharBertConfig(Settings):
    """CharacterBERT's word vocabulary and character CNN (config key ``models.characterbert``).

    ``word_vocab_size`` counts the MLM's output words, the five special tokens included
    (the top ``word_vocab_size - 5`` training words; fewer when the text has fewer).
    """

    section: ClassVar[str] = "models.characterbert"

    word_vocab_size: int = setting(20000, low=len(SPECIAL_TOKENS) + 1)
    max_word_chars: int = setting(20, low=3)
    max_chars: int = setting(1000, low=1)
    char_embedding_dim: int = setting(16, low=1)
    #: (kernel width, number of filters) of the character CNN
    filters: tuple[tuple[int, int], ...] = ((1, 32), (2, 32), (3, 64), (4, 128), (5, 256))
    highway_layers: int = setting(2, low=0)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.filters or any(len(f) != 2 or min(f) < 1 for f in self.filters):
            raise TokstudyError(
                "models.characterbert.filters must be a non-empty list of "
                f"[width, count] pairs >= 1, got {self.filters}"
            )
        widest = max(width for width, _ in self.filters)
        if self.max_word_chars < widest:
            raise TokstudyError(
                f"models.characterbert.max_word_chars ({self.max_word_chars}) must be >= the "
                f"widest filter ({widest})"
            )


@dataclass(frozen=True)
class TsvDataset:
    """A user-supplied sentence-classification dataset: tab-separated ``text``/``label`` files.

    Paths are relative to the working directory unless absolute; without ``validation``,
    a seeded ``models.finetune.validation_fraction`` of ``train`` is held out.
    """

    train: str
    test: str
    validation: str = ""


@dataclass(frozen=True)
class PretrainConfig(RunSettings):
    """One pretraining run (one seed); run keys: :class:`RunSettings`.

    ``undertrained_margin``: a BERT whose final training loss is less than this fraction
    below the unigram entropy of its training tokens (the loss of predicting every masked
    token by its frequency alone) is flagged ``undertrained``.
    """

    section: ClassVar[str] = "models.pretrain"
    non_training: ClassVar[frozenset[str]] = frozenset({"undertrained_margin"})

    preset: str = setting("tiny", choices=tuple(PRESETS))
    steps: int = setting(1000, low=1)
    batch_size: int = setting(32, low=1)
    max_length: int = setting(128, low=4)
    warmup_steps: int = 100
    dropout: float = 0.1
    #: dropout of the attention probabilities; left out: ``dropout`` (BERT's 0.1 for both).
    #: 0 lets ``torch.compile`` keep the fused attention kernel (docs/gpu.md)
    attention_dropout: float | None = setting(None, low=0, high=1, high_open=True)
    mlm_probability: float = proportion(0.15)
    mask_replace_prob: float = 0.8
    random_replace_prob: float = 0.1
    whole_word_mask: bool = False
    undertrained_margin: float = proportion(0.05)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_divisible(self.batch_size, self.devices * self.accumulate, self.section)
        if self.mask_replace_prob + self.random_replace_prob > 1:
            raise TokstudyError(
                "models.pretrain.mask_replace_prob + random_replace_prob must not exceed 1"
            )

    @property
    def attention_dropout_prob(self) -> float:
        """The dropout of the attention probabilities in effect (``dropout`` unless set)."""
        return self.dropout if self.attention_dropout is None else self.attention_dropout


@dataclass(frozen=True)
class FinetuneConfig(DeviceSettings):
    """Fine-tuning of a pretrained MLM on a downstream task (one seed per call)."""

    section: ClassVar[str] = "models.finetune"

    epochs: int = setting(3, low=1)
    batch_size: int = setting(32, low=1)
    lr: float = 1e-4
    weight_decay: float = 0.01
    warmup_ratio: float = 0.1
    max_length: int = setting(128, low=4)
    seed: int = 0
    validation_fraction: float = proportion(0.1)


@dataclass(frozen=True)
class EvalConfig(DeviceSettings):
    """Masked-LM evaluation on held-out text, clean and noised."""

    section: ClassVar[str] = "models.evaluation"

    max_lines: int = 1000
    batch_size: int = 64
    noise_levels: tuple[int, ...] = (10, 20, 30)
    noise_word_fraction: float = setting(0.2, low=0, high=1, low_open=True)
    noise_seed: int = 0
    bootstrap_resamples: int = 1000
    bootstrap_seed: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        for level in self.noise_levels:
            if not 0 < level <= 100:
                raise TokstudyError(f"models.evaluation.noise_levels: {level} is not a percentage")


#: Llama-style decoder sizes of the ``clm`` task: layers, hidden size, attention heads,
#: feed-forward size, and the longest context and largest vocabulary a cell may ask of it
#: (with a 4000-token vocabulary and tied embeddings: 0.94 M, 4.4 M, 13.0 M, 88.0 M and
#: 116 M parameters; docs/clm.md)
CLM_PRESETS: dict[str, dict[str, int]] = {
    "tiny": {
        "num_hidden_layers": 2,
        "hidden_size": 128,
        "num_attention_heads": 2,
        "intermediate_size": 384,
        "max_context": 512,
        "max_vocab": 65536,
    },
    "small": {
        "num_hidden_layers": 4,
        "hidden_size": 256,
        "num_attention_heads": 4,
        "intermediate_size": 768,
        "max_context": 1024,
        "max_vocab": 65536,
    },
    # the third CPU scale of the scale ladder (config/predictive_ladder.yaml)
    "medium": {
        "num_hidden_layers": 6,
        "hidden_size": 384,
        "num_attention_heads": 6,
        "intermediate_size": 1152,
        "max_context": 1024,
        "max_vocab": 65536,
    },
    "base": {
        "num_hidden_layers": 12,
        "hidden_size": 768,
        "num_attention_heads": 12,
        "intermediate_size": 2048,
        "max_context": 2048,
        "max_vocab": 262144,
    },
    # the GPU scale of the variant design (config/predictive_variants_gpu.yaml): base with
    # 16 layers, over 100 M parameters at every vocabulary size
    "large": {
        "num_hidden_layers": 16,
        "hidden_size": 768,
        "num_attention_heads": 12,
        "intermediate_size": 2048,
        "max_context": 2048,
        "max_vocab": 262144,
    },
}
#: ``bytes``: every tokenizer sees the same training text ``epochs`` times; ``flops``:
#: every model gets ``train_flops`` training FLOPs (as many steps as fit)
CLM_BUDGETS = ("bytes", "flops")


@dataclass(frozen=True)
class ClmConfig(RunSettings):
    """The causal-LM task (config key ``models.clm``): a decoder trained from scratch per
    cell and seed, scored as bits per byte on the held-out text (see ``docs/clm.md``).

    ``context``: tokens per training block and scoring window; ``stride``: tokens a
    scoring window moves (0: ``context // 2``). ``validation_lines``: the last lines of
    the training text, kept out of training, for early stopping (``patience``
    evaluations every ``eval_every`` steps without a lower validation loss; 0: off).
    ``heldout_max_lines``: held-out lines scored (0: all). ``undertrained_margin``: a
    model whose bits per byte is less than this fraction below the unigram baseline's is
    flagged ``undertrained``. ``min_tokens_per_parameter``: training refuses at start
    when the training text has fewer tokens per non-embedding parameter (0: no check;
    Chinchilla's compute-optimal ratio is about 20). ``bootstrap_resamples``: resamples
    of held-out lines for the 95 % interval of bits per byte.
    """

    section: ClassVar[str] = "models.clm"
    non_training: ClassVar[frozenset[str]] = frozenset(
        {
            "heldout_max_lines",
            "eval_batch_size",
            "undertrained_margin",
            "stride",
            "min_tokens_per_parameter",
            "bootstrap_resamples",
        }
    )

    preset: str = setting("tiny", choices=tuple(CLM_PRESETS))
    context: int = setting(128, low=8)
    stride: int = setting(0, low=0)
    batch_size: int = setting(16, low=1)
    budget: str = setting("bytes", choices=CLM_BUDGETS)
    epochs: float = setting(4.0, low=0, low_open=True)
    train_flops: float = setting(0.0, low=0)
    lr: float = learning_rate(3e-3)
    warmup_ratio: float = setting(0.05, low=0, high=1, high_open=True)
    dropout: float = setting(0.0, low=0, high=1, high_open=True)
    validation_lines: int = setting(200, low=1)
    eval_every: int = setting(0, low=0)
    patience: int = setting(0, low=0)
    heldout_max_lines: int = setting(0, low=0)
    eval_batch_size: int = setting(8, low=1)
    undertrained_margin: float = proportion(0.15)
    min_tokens_per_parameter: float = setting(0.0, low=0)
    bootstrap_resamples: int = setting(1000, low=100)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_divisible(self.batch_size, self.devices * self.accumulate, self.section)
        max_context = CLM_PRESETS[self.preset]["max_context"]
        if self.context > max_context:
            raise TokstudyError(
                f"models.clm.context: {self.context} does not fit preset {self.preset!r} "
                f"(at most {max_context} positions)"
            )
        if self.stride >= self.context:
            raise TokstudyError(
                f"models.clm.stride: {self.stride} must be below the context ({self.context}) "
                "so that every scored token has a token of left context"
            )
        if self.budget == "flops" and self.train_flops <= 0:
            raise TokstudyError("models.clm.train_flops: budget flops needs train_flops > 0")

    @property
    def window_stride(self) -> int:
        """Tokens a scoring window moves."""
        return self.stride or max(1, self.context // 2)


@dataclass(frozen=True)
class ClmScale:
    """A further scale of the ``clm`` task (an item of ``models.clm_scales``): its own
    settings ``clm`` (keys not given take :class:`ClmConfig`'s defaults), trained on
    ``languages`` (a subset of ``models.languages``; empty: all of them) with ``seeds``
    (empty: ``models.seeds``). ``name`` (default: the preset) names it in paths and
    tables: a second scale of one preset, e.g. the same decoder at another budget, needs
    one."""

    languages: tuple[str, ...] = ()
    seeds: tuple[int, ...] = ()
    clm: ClmConfig = field(default_factory=ClmConfig)
    name: str = ""

    def __post_init__(self) -> None:
        if self.name and not SCALE_NAME.fullmatch(self.name):
            raise TokstudyError(
                f"models.clm_scales.name: {self.name!r} is not a lower-case name "
                "(letters, digits, _; a letter first)"
            )

    @property
    def key(self) -> str:
        """The scale's name in paths, the ``scale`` column and the tables."""
        return self.name or self.clm.preset


@dataclass(frozen=True)
class ModelsConfig:
    """The whole ``models:`` section: what to pretrain and how to evaluate it.

    ``languages`` / ``tokenizers`` / ``vocab_sizes`` select which trained tokenizers get a
    model (empty: none); ``seeds`` are run one pretraining each; ``tasks`` is a subset of the
    registered tasks (:data:`tokstudy.models.task_registry.TASKS`; default: every task but
    ``clm``); ``treebanks`` maps a language to a UD folder
    name under ``ud_root`` (relative to the working directory unless absolute);
    ``sentence_feature`` is the UD feature whose presence on a
    word with a UPOS in ``sentence_upos`` labels a sentence ``yes``; ``sentence_tsv`` maps
    a language to a :class:`TsvDataset` its sentence task uses instead of the treebank.
    ``clm``: the causal-LM task's settings (:class:`ClmConfig`); ``clm_scales``: further
    presets on some languages and seeds (:class:`ClmScale`), each its own ``scale``.
    ``characterbert`` (when set) adds a CharacterBERT per language, pretrained with the
    ``pretrain`` settings and evaluated like the BERTs. ``pretokenize_shards``: the jobs
    each cell's training text is pre-tokenized in (byte ranges of the text, merged into one
    corpus; 1: one job).
    """

    languages: tuple[str, ...] = ()
    tokenizers: tuple[str, ...] = ()
    vocab_sizes: tuple[int, ...] = ()
    seeds: tuple[int, ...] = (0,)
    tasks: tuple[str, ...] = ("mlm", "noise", "pos", "sentence")
    clm: ClmConfig = field(default_factory=ClmConfig)
    clm_scales: tuple[ClmScale, ...] = ()
    treebanks: dict[str, str] = field(default_factory=dict)
    ud_root: str = ""
    sentence_feature: str = "Tense=Past"
    sentence_upos: tuple[str, ...] = ("VERB", "AUX")
    sentence_tsv: dict[str, TsvDataset] = field(default_factory=dict)
    characterbert: CharBertConfig | None = None
    pretokenize_shards: int = 1
    pretrain: PretrainConfig = field(default_factory=PretrainConfig)
    finetune: FinetuneConfig = field(default_factory=FinetuneConfig)
    evaluation: EvalConfig = field(default_factory=EvalConfig)

    def __post_init__(self) -> None:
        for task in self.tasks:
            choice("models.tasks", task, task_names())
        if self.pretokenize_shards < 1:
            raise TokstudyError(
                f"models.pretokenize_shards must be at least 1, got {self.pretokenize_shards}"
            )
        keys = [self.clm.preset, *(scale.key for scale in self.clm_scales)]
        if len(set(keys)) < len(keys):
            raise TokstudyError(
                f"models.clm_scales: scales {keys} repeat (a second scale of one preset "
                "needs its own name:)"
            )
        for scale in self.clm_scales:
            for language in scale.languages:
                choice("models.clm_scales.languages", language, self.languages)
        finetuned = set(tasks_of_kind("finetune")) & set(self.tasks)
        if finetuned and self.finetune.max_length > self.pretrain.max_length:
            raise TokstudyError(
                f"models.finetune.max_length ({self.finetune.max_length}) exceeds "
                f"models.pretrain.max_length ({self.pretrain.max_length}): the pretrained "
                "model has no positions beyond it"
            )
        if "=" not in self.sentence_feature:
            raise TokstudyError(
                f"models.sentence_feature must look like Name=Value, got {self.sentence_feature!r}"
            )
