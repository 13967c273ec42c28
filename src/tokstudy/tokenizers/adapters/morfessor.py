"""Morfessor Baseline (Creutz & Lagus, 2002/2007; the ``morfessor`` package, Virpioja et
al. 2013) behind the tokstudy interface.

Words are the whitespace-separated strings of a line, each written ``▁word`` (the mark
opens a word, as in SentencePiece). Morfessor Baseline learns a morph lexicon from the
training word types (counts dampened by ``count_modifier``) with recursive batch training;
a word is segmented by the model's own ``viterbi_segment``.

Size policy: Morfessor takes no vocabulary size. Its corpus weight is tuned during training
by the package's ``NumMorphCorpusWeight`` towards ``(size − specials − characters) · (1 +
overshoot)`` morph types (the package's documented mechanism: the weight moves after every
epoch while the lexicon is off by more than ``threshold``). The vocabulary is then the five
special tokens, every character of the training words (``▁`` included) and the most
frequent multi-character morphs (ties by string) up to the size. A morph the vocabulary
does not hold (one cut by the size, or a new morph Viterbi builds for an unseen word) is
written as its characters; a character never seen in training is ``[UNK]``, decoded as
U+FFFD. Where the lexicon holds fewer morphs than the size needs, the size policy applies
(``size_policy: adjust`` keeps the size reached, with one line saying it).

Files: ``morfessor.bin``, the package's own binary model (a pickle: load only folders this
workflow wrote; ``meta.json``'s checksums are verified before it is read), and
``morfessor_vocab.json`` (the vocabulary and Viterbi setting).

Round trip: lossless for text with single spaces between words, no leading or trailing
whitespace, no ``▁`` and only characters seen in training. Deterministic: Python's
``random`` (Morfessor's shuffling) is seeded with the study's seed.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.base import (
    SPECIAL_TOKENS,
    UNK,
    Encoded,
    Tokenizer,
    TokenStarts,
    TrainSpec,
    corpus_lines,
    enforce_size_policy,
)
from tokstudy.tokenizers.params import Param
from tokstudy.tokenizers.word_marks import METASPACE, opens_word, word_mark_starts

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizer

MODEL_FILE = "morfessor.bin"
VOCAB_FILE = "morfessor_vocab.json"
WORD = re.compile(r"\S+")
COUNT_MODIFIERS = ("log", "ones", "none")


def morfessor_baseline() -> Any:
    """The ``morfessor.baseline`` module; its absence is one line naming the package."""
    try:
        from morfessor import baseline, utils
    except ImportError:
        raise TokstudyError(
            "morfessor: the Python package 'morfessor' is not installed (pip install morfessor)"
        ) from None
    utils.show_progress_bar = False  # its dots on stderr, not the job's log
    return baseline


def _count_modifier(name: str) -> Any:
    """Morfessor's own dampenings (its command line's ``--dampening``); ``none``: None."""
    return {"log": lambda n: round(math.log2(n + 1)), "ones": lambda n: 1}.get(name)


def word_counts(corpus: Path) -> Counter[str]:
    """``▁word`` → count over the corpus's whitespace-separated words."""
    counts: Counter[str] = Counter()
    for line in corpus_lines(corpus):
        counts.update(METASPACE + word for word in line.split())
    return counts


def train_baseline(
    counts: Mapping[str, int], seed: int, params: Mapping[str, Any], morph_types: int | None
) -> Any:
    """A Morfessor Baseline model trained on word types and their counts (Python's
    ``random`` seeded with ``seed``), its corpus weight tuned towards ``morph_types`` morph
    types where given (``NumMorphCorpusWeight``), else the package's default of 1.

    ``params``: ``count_modifier``, ``min_count`` (word types seen fewer times are left
    out of the training, the package's ``freqthreshold``), ``threshold`` (with ``morph_types``),
    ``finish_threshold`` and ``max_epochs`` (:attr:`Morfessor.params_spec`)."""
    baseline = morfessor_baseline()
    random.seed(seed)
    model = baseline.BaselineModel()
    if morph_types is not None:
        model.set_corpus_weight_updater(
            baseline.NumMorphCorpusWeight(morph_types, params["threshold"])
        )
    model.load_data(
        sorted((count, word) for word, count in counts.items()),
        freqthreshold=params["min_count"],
        count_modifier=_count_modifier(params["count_modifier"]),
    )
    model.train_batch(finish_threshold=params["finish_threshold"], max_epochs=params["max_epochs"])
    return model


class Morfessor(Tokenizer):
    """Morfessor Baseline morphs, Viterbi-segmented, characters as fallback."""

    name = "morfessor"
    lossless = True
    params_spec: ClassVar[dict[str, Param]] = {
        "count_modifier": Param(str, "log", choices=COUNT_MODIFIERS),
        "min_count": Param(int, 1, minimum=1),
        "overshoot": Param((int, float), 0.1, minimum=0.0),
        "threshold": Param((int, float), 0.01, minimum=0.0),
        "finish_threshold": Param((int, float), 0.005, minimum=0.0),
        "max_epochs": Param(int, 20, minimum=1),
        "viterbi_maxlen": Param(int, 30, minimum=1),
    }

    def __init__(self, model: Any, vocab: list[str], maxlen: int) -> None:
        self.model = model
        self._vocab = vocab
        self._ids = {token: i for i, token in enumerate(vocab)}
        self.maxlen = maxlen
        self._words: dict[str, list[int]] = {}

    @classmethod
    def fit(cls, corpus: Path, spec: TrainSpec) -> Morfessor:
        assert spec.vocab_size is not None
        morfessor_baseline()
        params = spec.params
        counts = word_counts(corpus)
        chars = sorted({char for word in counts for char in word})
        fixed = len(SPECIAL_TOKENS) + len(chars)
        if spec.vocab_size < fixed:
            enforce_size_policy(cls.name, spec, fixed, " (special tokens and characters)")
        budget = max(0, spec.vocab_size - fixed)
        target = max(1, round((budget + len(chars)) * (1 + params["overshoot"])))
        model = train_baseline(counts, spec.seed, params, target)
        morphs = sorted(
            ((morph, count) for morph, count in model.get_constructions() if len(morph) > 1),
            key=lambda item: (-item[1], item[0]),
        )
        kept = [morph for morph, _ in morphs if morph not in SPECIAL_TOKENS][:budget]
        vocab = [*SPECIAL_TOKENS, *chars, *kept]
        enforce_size_policy(cls.name, spec, len(vocab), f" ({len(morphs)} morphs learned)")
        return cls(model, vocab, params["viterbi_maxlen"])

    def segment(self, word: str) -> list[str]:
        """The model's Viterbi morphs of ``▁word`` (the package's ``viterbi_segment``)."""
        morphs, _ = self.model.viterbi_segment(METASPACE + word, maxlen=self.maxlen)
        return list(morphs)

    def _word_ids(self, word: str) -> list[int]:
        ids = self._words.get(word)
        if ids is None:
            unk = self._ids[UNK]
            ids = []
            for morph in self.segment(word):
                if morph in self._ids:
                    ids.append(self._ids[morph])
                else:
                    ids.extend(self._ids.get(char, unk) for char in morph)
            self._words[word] = ids
        return ids

    def encode_batch(self, lines: Sequence[str]) -> list[list[int]]:
        return [[i for word in line.split() for i in self._word_ids(word)] for line in lines]

    def encode_batch_with_offsets(self, lines: Sequence[str]) -> list[Encoded]:
        """Offsets from each word's position: the ``▁`` mark stands for no character."""
        encoded = []
        for line in lines:
            ids: list[int] = []
            offsets: list[tuple[int, int]] = []
            for match in WORD.finditer(line):
                position = match.start()
                for i in self._word_ids(match.group()):
                    token = self._vocab[i]
                    width = 1 if i == self._ids[UNK] else len(token.lstrip(METASPACE))
                    ids.append(i)
                    offsets.append((position, position + width))
                    position += width
            encoded.append(Encoded(ids, offsets))
        return encoded

    def encode_batch_starts(self, lines: Sequence[str]) -> TokenStarts:
        """Token starts from the word marks (every word's first token opens it)."""
        return word_mark_starts(self, lines, self._opens_word)

    @cached_property
    def _opens_word(self) -> np.ndarray:
        return opens_word(self._vocab)

    def tokens_text(self, tokens: Sequence[str]) -> str:
        """Text of token strings: marks become spaces, the first one dropped."""
        text = "".join("\ufffd" if token == UNK else token for token in tokens)
        return text.replace(METASPACE, " ").removeprefix(" ")

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokens_text([self._vocab[i] for i in ids])

    @property
    def vocab(self) -> list[str]:
        return self._vocab

    def save(self, directory: Path) -> None:
        io = morfessor_io()
        io.write_binary_model_file(str(Path(directory) / MODEL_FILE), self.model)
        settings = {"vocab": self._vocab, "viterbi_maxlen": self.maxlen}
        (Path(directory) / VOCAB_FILE).write_text(
            json.dumps(settings, ensure_ascii=False), encoding="utf-8"
        )

    @classmethod
    def load(cls, directory: Path) -> Morfessor:
        model = morfessor_io().read_binary_model_file(str(Path(directory) / MODEL_FILE))
        settings = json.loads((Path(directory) / VOCAB_FILE).read_text(encoding="utf-8"))
        return cls(model, settings["vocab"], settings["viterbi_maxlen"])

    def to_transformers(self) -> PreTrainedTokenizer:
        """A slow ``transformers`` tokenizer segmenting with this model, same ids."""
        from tokstudy.tokenizers.slow_transformers_tokenizer import SegmenterTokenizer

        return SegmenterTokenizer(self)


def morfessor_io() -> Any:
    """A ``morfessor.MorfessorIO`` (the package's model files)."""
    morfessor_baseline()
    from morfessor.io import MorfessorIO

    return MorfessorIO()
