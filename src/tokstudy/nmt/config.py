"""Typed settings of the NMT study, read from the ``nmt:`` section of a config.

Build them with :func:`tokstudy.training.config.from_mapping` (unknown keys and wrong types
are one-line :class:`~tokstudy.errors.TokstudyError` s); the checks here name the key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from tokstudy.errors import TokstudyError
from tokstudy.training.config import DeviceSettings, RunSettings, Settings, proportion, setting

#: files written by :func:`tokstudy.nmt.report.write_report` into its output folder
REPORT_FILES = {
    "table1_bleu": "table1_bleu",
    "table1_chrf": "table1_chrf",
    "seeds": "seed_summary.csv",
    "significance": "significance.csv",
    "qualitative": "qualitative.md",
}
TABLE_FORMATS = (".csv", ".md", ".tex")

#: corpora that come with an installed package
BUILTIN_CORPORA = ("cldr",)
#: Transformer sizes: layers (encoder and decoder each), model width, heads, feed-forward width
PRESETS: dict[str, dict[str, int]] = {
    "tiny": {"layers": 2, "d_model": 128, "heads": 4, "ffn": 256},
    "base": {"layers": 6, "d_model": 512, "heads": 8, "ffn": 2048},
}


@dataclass(frozen=True)
class CorpusConfig:
    """Where the parallel text comes from: exactly one of the three keys.

    ``files``: two line-aligned files in the order of ``nmt.languages``; ``tsv``: one
    ``source<TAB>target`` file in that order; ``builtin: cldr``: display names of the
    Unicode CLDR shipped with Babel (:mod:`tokstudy.nmt.cldr`), offline. Files may be
    gzip-compressed; relative paths are relative to the working directory.
    """

    files: tuple[str, ...] = ()
    tsv: str = ""
    builtin: str = ""

    def __post_init__(self) -> None:
        given = [key for key in ("files", "tsv", "builtin") if getattr(self, key)]
        if len(given) != 1:
            raise TokstudyError(
                "nmt.corpus: give exactly one of files, tsv, builtin "
                f"(got {', '.join(given) or 'none'})"
            )
        if self.files and len(self.files) != 2:
            raise TokstudyError(
                f"nmt.corpus.files: expected two aligned files, got {len(self.files)}"
            )
        if self.builtin and self.builtin not in BUILTIN_CORPORA:
            raise TokstudyError(
                f"nmt.corpus.builtin must be one of {', '.join(BUILTIN_CORPORA)}, "
                f"got {self.builtin!r}"
            )

    @property
    def paths(self) -> tuple[str, ...]:
        """The given files: two aligned files, one TSV or none (a built-in corpus)."""
        return self.files or ((self.tsv,) if self.tsv else ())


@dataclass(frozen=True)
class SplitConfig(Settings):
    """Seeded train / dev / test split of a parallel corpus (dev and test sizes in pairs)."""

    section: ClassVar[str] = "nmt.split"

    dev_size: int = setting(1000, low=1)
    test_size: int = setting(1000, low=1)
    seed: int = 0
    deduplicate: bool = True


#: the most batch widths (so CUDA graphs) ``nmt.train.cuda_graphs`` allows
MAX_GRAPH_SHAPES = 16


def round_up(length: int, multiple: int) -> int:
    """The smallest multiple of ``multiple`` that is at least ``length``."""
    return -(-length // multiple) * multiple


@dataclass(frozen=True)
class TrainConfig(RunSettings):
    """One NMT training run (one seed); run keys: :class:`RunSettings` (a log row and a
    checkpoint at every evaluation unless ``log_every`` / ``checkpoint_every`` say more
    often).

    ``max_tokens`` bounds a batch's padded size: ``sentences × longest side`` (source or
    target, special tokens included). Training pairs with a side longer than
    ``max_length`` tokens are left out. Every ``eval_every`` steps the dev set is
    translated (``dev_beam_size``; 1 is greedy) and scored with chrF; training stops after
    ``patience`` evaluations without a better dev chrF, or at ``max_steps``. ``compile``:
    the training loss runs through ``torch.compile``; left out, it does not (eager
    measured faster on CUDA: docs/gpu.md). ``devices``: processes (GPUs, or CPU processes)
    that train the model together, DDP over the sentences of each batch
    (:mod:`tokstudy.training.distributed`); ``accumulate``: micro-batches per step (the
    sentences of each token-budget batch cut into that many parts). ``pad_to_multiple``:
    each batch's source and target padded to a multiple of this many positions (1: to
    their longest sentence), its budget counted with the padded length: fewer distinct
    batch shapes for compiled kernels and tensor cores, at the cost of padding.
    ``cuda_graphs``: on CUDA the compiled loss is replayed as CUDA graphs
    (``torch.compile``'s ``reduce-overhead`` mode: the host launches one graph a step, not
    each kernel; on the CPU the loss runs as ``compile`` says); each batch then takes one
    of a few fixed shapes on every device, one graph each: both sides padded to one width
    (the longest side rounded up to ``pad_to_multiple``) and to ``max_tokens // width``
    rows, the rows past the batch's sentences filled with a one-token source and no target
    (no loss, no tokens counted). At most :data:`MAX_GRAPH_SHAPES` widths; one device.
    """

    section: ClassVar[str] = "nmt.train"
    preset: str = setting("tiny", choices=tuple(PRESETS))
    max_steps: int = setting(50000, low=1)
    max_tokens: int = setting(4096, low=1)
    max_length: int = setting(256, low=3)
    warmup_steps: int = setting(4000, low=1)
    adam_betas: tuple[float, ...] = (0.9, 0.98)
    weight_decay: float = setting(0.0, low=0)
    label_smoothing: float = setting(0.1, low=0, high=1, high_open=True)
    dropout: float = setting(0.1, low=0, high=1, high_open=True)
    eval_every: int = setting(1000, low=1)
    patience: int = setting(10, low=1)
    dev_beam_size: int = setting(1, low=1)
    #: 0: at every evaluation
    checkpoint_every: int = setting(0, low=0)
    #: 0: at every evaluation
    log_every: int = setting(0, low=0)
    pad_to_multiple: int = setting(1, low=1)
    cuda_graphs: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        longest = round_up(self.max_length, self.pad_to_multiple)
        if self.cuda_graphs:
            self._check_cuda_graphs(longest // self.pad_to_multiple)
        if self.max_tokens < longest:
            padded = f", padded to {longest}" if longest > self.max_length else ""
            raise TokstudyError(
                f"nmt.train.max_tokens ({self.max_tokens}) must be >= nmt.train.max_length "
                f"({self.max_length}{padded}): a batch must hold the longest training pair"
            )
        if len(self.adam_betas) != 2:
            raise TokstudyError(f"nmt.train.adam_betas must be two numbers, got {self.adam_betas}")

    def _check_cuda_graphs(self, shapes: int) -> None:
        if self.compile is False:
            raise TokstudyError(
                "nmt.train.cuda_graphs replays the compiled loss, but nmt.train.compile is "
                "false: set it to true or leave it out"
            )
        if shapes > MAX_GRAPH_SHAPES:
            least = -(-self.max_length // MAX_GRAPH_SHAPES)
            raise TokstudyError(
                f"nmt.train.cuda_graphs: max_length {self.max_length} in steps of "
                f"pad_to_multiple {self.pad_to_multiple} gives {shapes} batch shapes, one "
                f"graph each; at most {MAX_GRAPH_SHAPES}: set nmt.train.pad_to_multiple to "
                f"{least} or more"
            )
        if self.devices > 1:
            raise TokstudyError(
                f"nmt.train.cuda_graphs trains on one device; nmt.train.devices is {self.devices}"
            )


@dataclass(frozen=True)
class DecodeConfig(DeviceSettings):
    """Beam search (``beam_size`` 1 is greedy) over batches of ``batch_size`` sentences.

    A hypothesis has at most ``max_length_a × source length + max_length_b`` tokens;
    ``length_penalty`` is the exponent α of the length normalisation ``score / length^α``.
    Device keys: :class:`DeviceSettings`.
    """

    section: ClassVar[str] = "nmt.decode"

    beam_size: int = setting(5, low=1)
    length_penalty: float = 1.0
    batch_size: int = setting(64, low=1)
    max_length_a: float = setting(1.5, low=0)
    max_length_b: int = setting(10, low=1)


@dataclass(frozen=True)
class EvaluationConfig(Settings):
    """Scoring and comparison: ``baseline`` is the tokenizer every other one is tested against.

    Paired bootstrap resampling uses ``bootstrap_samples`` resamples drawn with
    ``bootstrap_seed``; the qualitative analysis lists ``qualitative_sentences`` sentences
    each way.
    """

    section: ClassVar[str] = "nmt.evaluation"

    baseline: str = "sp_bpe"
    bootstrap_samples: int = setting(1000, low=1)
    bootstrap_seed: int = 0
    significance_level: float = proportion(0.05)
    qualitative_sentences: int = setting(10, low=1)


@dataclass(frozen=True)
class NMTConfig:
    """The whole ``nmt:`` section.

    ``languages`` is the language pair whose parallel ``corpus`` is split once;
    ``directions`` are ``src-tgt`` codes over that pair. ``joint``: one tokenizer trained
    on both sides instead of one per language.
    """

    languages: tuple[str, ...] = ("en", "mr")
    directions: tuple[str, ...] = ("en-mr", "mr-en")
    corpus: CorpusConfig = field(default_factory=lambda: CorpusConfig(builtin="cldr"))
    tokenizers: tuple[str, ...] = ("sp_bpe", "hft", "sp_unigram")
    vocab_sizes: tuple[int, ...] = (3000,)
    joint: bool = False
    seeds: tuple[int, ...] = (1, 2, 3, 4, 5)
    split: SplitConfig = field(default_factory=SplitConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    decode: DecodeConfig = field(default_factory=DecodeConfig)
    evaluation: EvaluationConfig = field(default_factory=EvaluationConfig)

    def __post_init__(self) -> None:
        if len(self.languages) != 2 or self.languages[0] == self.languages[1]:
            raise TokstudyError(f"nmt.languages must name two languages, got {self.languages}")
        for direction in self.directions:
            if sorted(direction.split("-")) != sorted(self.languages):
                raise TokstudyError(
                    f"nmt.directions: {direction!r} is not 'src-tgt' over {self.languages}"
                )
        if self.evaluation.baseline not in self.tokenizers:
            raise TokstudyError(
                f"nmt.evaluation.baseline {self.evaluation.baseline!r} is not in nmt.tokenizers"
            )
