"""Parity-aware BPE (Foroutan et al., 2025): HF ``tokenizers``' ``ParityBpeTrainer``, which
learns BPE merges from one text per language and gives each merge to the language whose
compression lags most, on a parallel development set or against target ratios.

The pipeline is ``hf_bpe``'s (NFKC, ``Metaspace``, BPE, ``Metaspace`` decoder), so its
segmentations compare with the other BPE tokenizers directly; ratios are counted in
characters (the units the ``Metaspace`` pre-tokenizer emits).

The training text is split by language: ``languages_file`` names the language of each
line (the multilingual analysis writes it beside the mixed text, so a parity-aware
tokenizer trains on the same lines as the temperature-sampled one); without it every line
is the language of the cell. The balance comes from (the first given):

- ``dev_pud_root``: the Parallel UD sentences of every language, joined on ``# sent_id``;
- ``dev_udhr_root``: the UDHR articles of every language (its first translation by code),
  joined on the article number;
- ``ratio``: language → target compression ratio (only relative values matter).

Neither is one line naming ``tokenizers.parity_bpe.params``. The size is exact: the trainer
counts the alphabet into ``num_merges`` (``total_symbols``); where the text yields fewer
merges, the size policy applies.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, normalizers, trainers

from tokstudy.errors import TokstudyError
from tokstudy.files.lines import iter_text_lines, write_text_lines
from tokstudy.tokenizers.adapters.hf_tokenizers import PRE_TOKENIZERS, HFTokenizersAdapter
from tokstudy.tokenizers.base import (
    SPECIAL_TOKENS,
    UNK,
    Tokenizer,
    TrainSpec,
    corpus_lines,
    enforce_size_policy,
)
from tokstudy.tokenizers.params import Param, param_key
from tokstudy.tokenizers.train_fraction import describe_share, sampled_indices
from tokstudy.tokenizers.word_marks import METASPACE

log = logging.getLogger(__name__)

#: the keys that give a parity-aware tokenizer its balance (one of them is required)
BALANCE_KEYS = ("dev_pud_root", "dev_udhr_root", "ratio")


def line_languages(languages_file: str, lines: list[str], corpus: Path) -> list[str]:
    """The language code of each line of ``corpus`` (one line of ``languages_file`` each)."""
    codes = [code.strip() for code in iter_text_lines(Path(languages_file))]
    if len(codes) != len(lines):
        raise TokstudyError(
            f"{languages_file}: {len(codes)} language codes for {len(lines)} lines of {corpus}"
        )
    return codes


def lines_by_language(corpus: Path, languages_file: str | None, label: str) -> dict[str, list[str]]:
    """The corpus's lines grouped by language, in order (languages sorted)."""
    lines = list(corpus_lines(corpus))
    if languages_file is None:
        return {label: lines}
    codes = line_languages(languages_file, lines, corpus)
    grouped: dict[str, list[str]] = {}
    for code, line in zip(codes, lines, strict=True):
        grouped.setdefault(code, []).append(line)
    return dict(sorted(grouped.items()))


def pud_dev(root: Path, languages: list[str], key: str) -> dict[str, list[str]]:
    """The PUD sentences every language has, in ``sent_id`` order."""
    from tokstudy.corpora.ud import pud_treebanks, sentence_texts

    files = pud_treebanks(Path(root))
    missing = [language for language in languages if language not in files]
    if missing:
        raise TokstudyError(
            f"{key}: no PUD treebank of {', '.join(missing)} under {root} "
            f"(has: {', '.join(sorted(files)) or 'nothing'})"
        )
    texts = {language: sentence_texts(files[language]) for language in languages}
    shared = sorted(set.intersection(*(set(t) for t in texts.values())))
    return {language: [texts[language][i] for i in shared] for language in languages}


def udhr_dev(root: Path, languages: list[str], key: str) -> dict[str, list[str]]:
    """The UDHR articles every language has (its first translation), by article number."""
    from tokstudy.corpora.udhr import (
        read_articles,
        read_index,
        translation_file,
        translations_of,
    )

    index = read_index(Path(root))
    articles = {}
    for language in languages:
        codes = translations_of(index, language)
        if not codes:
            raise TokstudyError(f"{key}: no UDHR translation of {language!r} under {root}")
        articles[language] = read_articles(translation_file(Path(root), codes[0]))
    shared = sorted(set.intersection(*(set(a) for a in articles.values())))
    return {language: [articles[language][n] for n in shared] for language in languages}


def balance(params: Mapping[str, Any], languages: list[str], name: str) -> dict[str, Any]:
    """``dev_iterators`` or ``ratio`` of ``ParityBpeTrainer.train_from_iterator``."""
    for key, read in (("dev_pud_root", pud_dev), ("dev_udhr_root", udhr_dev)):
        if params.get(key) is not None:
            dev = read(Path(params[key]), languages, param_key(name, key))
            return {"dev_iterators": [iter(dev[language]) for language in languages]}
    ratio = params.get("ratio")
    if ratio is None:
        raise TokstudyError(
            f"{param_key(name)}: a parity-aware tokenizer needs a parallel dev set "
            "(dev_pud_root or dev_udhr_root) or ratio (language → target ratio)"
        )
    missing = [language for language in languages if language not in ratio]
    if missing:
        raise TokstudyError(f"{param_key(name, 'ratio')}: no ratio for {', '.join(missing)}")
    return {"ratio": [float(ratio[language]) for language in languages]}


class ParityBPE(HFTokenizersAdapter):
    """BPE whose merges are balanced across languages (``ParityBpeTrainer``)."""

    name = "parity_bpe"
    lossless = True
    #: trained on a mixed text with the language of each line (analyses.multilingual)
    parity_aware = True
    balance_keys = BALANCE_KEYS
    params_spec: ClassVar[dict[str, Param]] = {
        "languages_file": Param((str, type(None)), None),
        "dev_pud_root": Param((str, type(None)), None),
        "dev_udhr_root": Param((str, type(None)), None),
        "ratio": Param(
            (dict, type(None)), None, items=Param((int, float), minimum=0, low_open=True)
        ),
        "variant": Param(str, "base", choices=("base", "window")),
        "global_merges": Param(int, 0, minimum=0),
        "window_size": Param(int, 100, minimum=1),
        "alpha": Param((int, float), 2.0, minimum=0.0),
        "min_frequency": Param(int, 0, minimum=0),
    }

    @classmethod
    def check_study_params(
        cls, params: Mapping[str, Any], languages: Sequence[str]
    ) -> tuple[str, str] | None:
        """A ``ratio`` names only languages the tokenizer is trained on."""
        unknown = sorted(set(params.get("ratio") or {}) - set(languages))
        if unknown:
            return "ratio", (
                f"{unknown[0]!r} is not a language it is trained on "
                f"({', '.join(sorted(languages))})"
            )
        return None

    @classmethod
    def train(cls, corpus: Path, spec: TrainSpec) -> Tokenizer:
        """As every adapter; with a share of lines (``train_fraction`` below 1 or a
        ``max_train_lines`` cap) and a ``languages_file``, the seeded share is drawn from
        both files alike, so they stay aligned."""
        languages_file = (spec.params or {}).get("languages_file")
        corpus = Path(corpus)
        whole = spec.train_fraction == 1 and spec.max_train_lines is None
        if whole or languages_file is None or not corpus.is_file():
            return super().train(corpus, spec)
        lines = list(corpus_lines(corpus))
        codes = line_languages(languages_file, lines, corpus)
        cap = spec.max_train_lines
        kept = sampled_indices(len(lines), spec.train_fraction, spec.seed, cap)
        log.info("%s", describe_share(len(kept), len(lines), spec.train_fraction, cap))
        with tempfile.TemporaryDirectory(prefix="tokstudy-sample-") as folder:
            sample, sample_codes = Path(folder) / corpus.name, Path(folder) / "languages.txt"
            write_text_lines(sample, (lines[i] for i in kept))
            write_text_lines(sample_codes, (codes[i] for i in kept))
            params = {**spec.params, "languages_file": str(sample_codes)}
            whole_sample = replace(spec, train_fraction=1.0, max_train_lines=None, params=params)
            return super().train(sample, whole_sample)

    @classmethod
    def _train(cls, texts: dict[str, list[str]], merges: int, spec: TrainSpec) -> HFTokenizer:
        params = spec.params
        tokenizer = HFTokenizer(models.BPE(unk_token=UNK))
        tokenizer.normalizer = normalizers.NFKC()
        tokenizer.pre_tokenizer = PRE_TOKENIZERS["metaspace"]()
        tokenizer.decoder = decoders.Metaspace(replacement=METASPACE, prepend_scheme="always")
        trainer = trainers.ParityBpeTrainer(
            num_merges=merges,
            variant=params["variant"],
            min_frequency=params["min_frequency"],
            global_merges=params["global_merges"],
            window_size=params["window_size"],
            alpha=float(params["alpha"]),
            total_symbols=True,
            special_tokens=list(SPECIAL_TOKENS),
            show_progress=False,
        )
        languages = list(texts)
        trainer.train_from_iterator(
            tokenizer,
            [iter(texts[language]) for language in languages],
            **balance(params, languages, cls.name),
        )
        return tokenizer

    @classmethod
    def fit(cls, corpus: Path, spec: TrainSpec) -> ParityBPE:
        assert spec.vocab_size is not None
        texts = lines_by_language(corpus, spec.params["languages_file"], spec.label)
        balance(spec.params, list(texts), cls.name)  # a missing balance before training
        tokenizer = cls._train(texts, spec.vocab_size, spec)
        reached = tokenizer.get_vocab_size(with_added_tokens=True)
        if reached < spec.vocab_size:  # merges that made no new token: ask for as many more
            retry = cls._train(texts, 2 * spec.vocab_size - reached, spec)
            if retry.get_vocab_size(with_added_tokens=True) <= spec.vocab_size:
                tokenizer = retry
            reached = tokenizer.get_vocab_size(with_added_tokens=True)
        enforce_size_policy(cls.name, spec, reached)
        return cls(tokenizer)
