"""SuperBPE (Liu et al., 2025, "SuperBPE: Space Travel for Language Models"): subwords,
then superwords, in two stages of HF ``tokenizers`` BPE.

Stage 1 is ``hf_bpe``'s pipeline (NFKC, ``Metaspace`` pre-tokenization at whitespace) up to
the *transition* size ``round(transition · vocab_size)``: every token lies inside one word.
Stage 2 continues the merges without whitespace pre-tokenization, so tokens may span
several words (``▁of▁the``). HF ``tokenizers`` cannot resume a trainer from given merges
(the paper's authors patched the library), so stage 2 is the closest the released library
allows: every training line is encoded by stage 1, each stage-1 token written as one
private-use character (U+F0000 onwards), and ``BpeTrainer`` learns merges of those
characters over whole lines (no pre-tokenizer); each learned merge is mapped back to its two
token strings. Where two stage-2 symbols spell the same string (``a`` + ``bc`` beside stage
1's ``abc``), they are one token in the result and the merge adds no item; stage 2 learns a
few merges more than it needs and keeps them in order until the size is reached.

The saved pipeline is one BPE model (stage-1 merges, then stage-2 merges) behind a
``Metaspace`` pre-tokenizer that marks spaces but does not split at them: stage-1 merges
never join across a mark (no stage-1 token holds one inside), so applying them to the whole
line equals stage 1's per-word encoding, and stage 2's merges follow. Not the paper's:
its limit of superwords to at most four words, and its punctuation rules in stage 2.
Round trip as ``hf_bpe``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, normalizers, pre_tokenizers, trainers

from tokstudy.errors import TokstudyError
from tokstudy.files.lines import batched
from tokstudy.tokenizers.adapters.hf_tokenizers import HFBPE, HFTokenizersAdapter
from tokstudy.tokenizers.base import (
    SPECIAL_TOKENS,
    UNK,
    TrainSpec,
    corpus_lines,
    enforce_size_policy,
)
from tokstudy.tokenizers.params import Param
from tokstudy.tokenizers.word_marks import METASPACE

#: the private-use planes 15 and 16 (65,534 code points each) that spell stage-1 ids
_PLANES = (0xF0000, 0x100000)
_PLANE_SIZE = 0xFFFE
BATCH_LINES = 2048
#: stage-2 merges learned beyond those needed, for merges that add no new token
EXTRA_MERGES = 0.1


def id_char(token_id: int) -> str:
    """The private-use character that stands for a stage-1 id."""
    plane, offset = divmod(token_id, _PLANE_SIZE)
    if plane >= len(_PLANES):
        raise TokstudyError(f"superbpe: stage 1 has more than {2 * _PLANE_SIZE} tokens")
    return chr(_PLANES[plane] + offset)


def char_id(char: str) -> int:
    """The stage-1 id a private-use character stands for."""
    code = ord(char)
    plane = 0 if code < _PLANES[1] else 1
    return plane * _PLANE_SIZE + code - _PLANES[plane]


def _model(tokenizer: HFTokenizer) -> tuple[dict[str, int], list[tuple[str, str]]]:
    model = json.loads(tokenizer.to_str())["model"]
    return model["vocab"], [tuple(merge) for merge in model["merges"]]


def _stage_two_text(stage_one: HFTokenizer, corpus: Path) -> Iterator[str]:
    for batch in batched(corpus_lines(corpus), BATCH_LINES):
        for encoding in stage_one.encode_batch(batch, add_special_tokens=False):
            yield "".join(map(id_char, encoding.ids))


def superword_merges(
    stage_one: HFTokenizer, corpus: Path, wanted: int
) -> list[tuple[str, str, bool]]:
    """Stage 2: merges over whole lines of stage-1 tokens, as ``(left, right, new)`` token
    strings in order (``new``: the merged string is not yet a token), up to ``wanted`` new
    tokens (fewer where the text yields fewer)."""
    vocab, _ = _model(stage_one)
    strings = {i: token for token, i in vocab.items()}
    lines = list(_stage_two_text(stage_one, corpus))
    alphabet = len({char for line in lines for char in line})
    learner = HFTokenizer(models.BPE())
    trainer = trainers.BpeTrainer(
        vocab_size=alphabet + wanted + max(1, round(EXTRA_MERGES * wanted)),
        show_progress=False,
        special_tokens=[],
    )
    learner.train_from_iterator(lines, trainer=trainer)
    known = set(vocab)
    merges: list[tuple[str, str, bool]] = []
    seen: set[tuple[str, str]] = set()
    added = 0
    for left, right in _model(learner)[1]:
        pair = (
            "".join(strings[char_id(c)] for c in left),
            "".join(strings[char_id(c)] for c in right),
        )
        if pair in seen or added == wanted:
            continue
        seen.add(pair)
        new = pair[0] + pair[1] not in known
        known.add(pair[0] + pair[1])
        added += new
        merges.append((*pair, new))
    return merges


def _pipeline(vocab: dict[str, int], merges: list[tuple[str, str]]) -> HFTokenizer:
    tokenizer = HFTokenizer(models.BPE(vocab=vocab, merges=merges, unk_token=UNK))
    tokenizer.normalizer = normalizers.NFKC()
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(
        replacement=METASPACE, prepend_scheme="always", split=False
    )
    # Metaspace's decoder drops every mark of the first token (``▁What▁is`` → ``Whatis``)
    tokenizer.decoder = decoders.Sequence(
        [decoders.Replace(METASPACE, " "), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
    )
    return tokenizer


class SuperBPE(HFTokenizersAdapter):
    """Two-stage BPE: subwords up to the transition size, then superwords."""

    name = "superbpe"
    lossless = True
    params_spec: ClassVar[dict[str, Param]] = {
        # 1 would be plain BPE (no superword merges): hf_bpe trains that
        "transition": Param(
            (int, float), 0.9, minimum=0.0, maximum=1.0, low_open=True, high_open=True
        ),
        "min_frequency": Param(int, 0, minimum=0),
    }

    @classmethod
    def fit(cls, corpus: Path, spec: TrainSpec) -> HFTokenizersAdapter:
        assert spec.vocab_size is not None
        transition = max(1, round(spec.params["transition"] * spec.vocab_size))
        stage_one = HFTokenizer(models.BPE(unk_token=UNK))
        stage_one.normalizer = normalizers.NFKC()
        stage_one.pre_tokenizer = pre_tokenizers.Metaspace(
            replacement=METASPACE, prepend_scheme="always"
        )
        trainer = trainers.BpeTrainer(
            vocab_size=transition,
            special_tokens=list(SPECIAL_TOKENS),
            show_progress=False,
            min_frequency=spec.params["min_frequency"],
        )
        HFBPE.train_library(stage_one, trainer, corpus, spec)
        vocab, merges = _model(stage_one)
        if len(vocab) > spec.vocab_size:  # below the alphabet: the policy decides
            enforce_size_policy(cls.name, spec, len(vocab))
            return cls(_pipeline(vocab, merges))
        wanted = spec.vocab_size - len(vocab)
        for left, right, new in superword_merges(stage_one, corpus, wanted) if wanted else []:
            merges.append((left, right))
            if new:
                vocab[left + right] = len(vocab)
        enforce_size_policy(cls.name, spec, len(vocab), " (stage 2 ran out of merges)")
        return cls(_pipeline(vocab, merges))
