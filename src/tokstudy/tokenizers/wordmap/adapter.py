"""``wordmap_wordpiece``: WordPiece trained on Wordmap-pre-segmented German text.

Training (:meth:`WordmapWordPiece.train`):

1. the corpus is NFKC-normalised and split BERT-style into words, and word types counted;
2. HanTa tags the word types; the lexeme list is built from the flagged types and their
   lemmas (:mod:`.tagging`); an empty list is a :class:`TokstudyError`;
3. word maps over the lexeme list give the segment vocabulary (:mod:`.maps`,
   :mod:`.vocabulary`);
4. the HF WordPiece trainer runs on the corpus through the pre-segmentation step
   (:mod:`.presegment`), with the special tokens ``[UNK] [PAD] [CLS] [SEP] [MASK]``.

Encoding applies the same normalisation, word splitting, tagging and segmentation (cached
per word type), then WordPiece. Ids are renumbered like ``hf_wordpiece``'s (special tokens
first, then by token) because the library's trainer numbers tokens in hash-map order.

Parameters (``spec.params``): ``pos_tags`` (STTS tags to segment, default full verbs),
``z_threshold`` (0.0), ``min_affix_count`` (2), ``min_stem_length`` (2),
``max_segments`` (8), ``max_lexemes`` (5000), and the WordPiece trainer's
``min_frequency`` and ``limit_alphabet``.

What decoding loses: NFKC normalisation; the spacing around punctuation and any run of
whitespace (BERT-style splitting keeps no whitespace: pieces of different words are joined
by one space, so ``Hallo, Welt`` decodes as ``Hallo , Welt``); a word with a character
outside the alphabet becomes ``[UNK]``. Segments inside a word are glued back without
spaces. The decoder's English clean-up rules (e.g. `` do not`` → `` don't``) are off.

``to_transformers`` returns a fast tokenizer that runs the pre-segmentation in Python: it
encodes like the adapter (with ``[CLS] … [SEP]``) and can be pickled, but not written with
``save_pretrained``; the tokstudy directory (``tokenizer.json`` + ``wordmap.json``) is the
saved form.
"""

from __future__ import annotations

import json
import logging
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, normalizers, processors, trainers

from tokstudy.corpus_io import count_lines, iter_lines
from tokstudy.errors import TokstudyError, VocabSizeError
from tokstudy.tokenizers.base import CLS, SEP, SPECIAL_TOKENS, UNK, Tokenizer, TrainSpec
from tokstudy.tokenizers.hf_adapter import (
    TOKENIZER_FILE,
    WORDPIECE_PREFIX,
    HFWordPiece,
    check_size,
)
from tokstudy.tokenizers.wordmap.presegment import WordmapPreSegmenter, serialisable_pre_tokenizer
from tokstudy.tokenizers.wordmap.segmenter import Segmenter
from tokstudy.tokenizers.wordmap.tagging import (
    DEFAULT_POS_TAGS,
    HanTaFlagger,
    hanta_version,
    lexeme_list,
)
from tokstudy.tokenizers.wordmap.vocabulary import SegmentVocabulary, build_segment_vocabulary

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerFast

log = logging.getLogger(__name__)

WORDMAP_FILE = "wordmap.json"

#: Wordmap parameters and their defaults
WORDMAP_DEFAULTS: dict[str, Any] = {
    "pos_tags": list(DEFAULT_POS_TAGS),
    "z_threshold": 0.0,
    "min_affix_count": 2,
    "min_stem_length": 2,
    "max_segments": 8,
    "max_lexemes": 5000,
}
#: parameters handed to the WordPiece trainer when given
TRAINER_PARAMS = ("min_frequency", "limit_alphabet")


def wordmap_settings(params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split ``spec.params`` into Wordmap settings (defaults filled in) and trainer params."""
    unknown = sorted(set(params) - set(WORDMAP_DEFAULTS) - set(TRAINER_PARAMS))
    if unknown:
        valid = ", ".join(sorted([*WORDMAP_DEFAULTS, *TRAINER_PARAMS]))
        raise TokstudyError(
            f"wordmap_wordpiece: unknown parameter {', '.join(unknown)}; valid parameters: {valid}"
        )
    settings = {key: params.get(key, default) for key, default in WORDMAP_DEFAULTS.items()}
    if isinstance(settings["pos_tags"], str):
        raise TokstudyError("wordmap_wordpiece parameter pos_tags: expected a list of STTS tags")
    trainer_params = {key: params[key] for key in TRAINER_PARAMS if key in params}
    return settings, trainer_params


def word_type_counts(corpus: Path, tokenizer: HFTokenizer) -> Counter[str]:
    """Word types of a corpus after the tokenizer's normaliser and BERT-style splitting."""
    splitter = serialisable_pre_tokenizer()
    normalizer = tokenizer.normalizer
    counts: Counter[str] = Counter()
    for line in iter_lines(corpus):
        text = normalizer.normalize_str(line) if normalizer is not None else line
        counts.update(word for word, _ in splitter.pre_tokenize_str(text))
    return counts


class WordmapWordPiece(Tokenizer):
    """WordPiece on text pre-segmented by Wordmap (Jung, 2023)."""

    name = "wordmap_wordpiece"
    deterministic = False  # the WordPiece trainer's tie-breaking (see HFWordPiece)

    def __init__(
        self,
        tokenizer: HFTokenizer,
        presegmenter: WordmapPreSegmenter,
        segment_vocabulary: SegmentVocabulary,
    ) -> None:
        self._tokenizer = tokenizer
        self._tokenizer.pre_tokenizer = presegmenter.hf_pre_tokenizer()
        self.presegmenter = presegmenter
        self.segment_vocabulary = segment_vocabulary
        size = tokenizer.get_vocab_size(with_added_tokens=True)
        self._vocab = [tokenizer.id_to_token(i) for i in range(size)]

    @classmethod
    def train(cls, corpus: Path, spec: TrainSpec) -> WordmapWordPiece:
        settings, trainer_params = wordmap_settings(spec.params)
        flagger = HanTaFlagger(settings["pos_tags"])
        tokenizer = HFTokenizer(models.WordPiece(unk_token=UNK))
        tokenizer.normalizer = normalizers.NFKC()
        tokenizer.decoder = decoders.WordPiece(prefix=WORDPIECE_PREFIX, cleanup=False)
        counts = word_type_counts(corpus, tokenizer)
        lexemes = lexeme_list(counts, flagger, settings["max_lexemes"])
        if not lexemes:
            raise TokstudyError(
                f"{corpus}: no word tagged {', '.join(flagger.pos_tags)} by HanTa; "
                "the Wordmap lexeme list is empty"
            )
        log.info(
            "Wordmap (%s): %d lexemes from %d word types", spec.label, len(lexemes), len(counts)
        )
        vocabulary = build_segment_vocabulary(
            lexemes,
            z_threshold=float(settings["z_threshold"]),
            min_affix_count=int(settings["min_affix_count"]),
            min_stem_length=int(settings["min_stem_length"]),
        )
        segmenter = Segmenter(vocabulary.entries, max_segments=int(settings["max_segments"]))
        presegmenter = WordmapPreSegmenter(flagger, segmenter)
        tokenizer.pre_tokenizer = presegmenter.hf_pre_tokenizer()
        trainer = trainers.WordPieceTrainer(
            vocab_size=spec.vocab_size,
            special_tokens=list(SPECIAL_TOKENS),
            continuing_subword_prefix=WORDPIECE_PREFIX,
            show_progress=False,
            **trainer_params,
        )
        os.environ["RAYON_NUM_THREADS"] = str(max(1, spec.threads))
        try:
            tokenizer.train_from_iterator(
                iter_lines(corpus), trainer=trainer, length=count_lines(corpus)
            )
        except Exception as exc:  # the Rust trainers raise a bare Exception
            raise VocabSizeError(
                f"{cls.name} ({spec.label}): vocabulary size {spec.vocab_size} "
                f"cannot be reached: {exc}"
            ) from exc
        HFWordPiece.make_canonical(tokenizer)
        adapter = cls(tokenizer, presegmenter, vocabulary)
        check_size(cls.name, spec, len(adapter.vocab))
        return adapter

    def encode_batch(self, lines: Sequence[str]) -> list[list[int]]:
        encodings = self._tokenizer.encode_batch(list(lines), add_special_tokens=False)
        return [encoding.ids for encoding in encodings]

    def decode(self, ids: Sequence[int]) -> str:
        return self._tokenizer.decode(list(ids), skip_special_tokens=False)

    @property
    def vocab(self) -> list[str]:
        return self._vocab

    def presegment(self, word: str) -> list[str]:
        """The pre-tokens WordPiece sees for one word (continuations marked ``##``)."""
        return self.presegmenter.presegment(word)

    def serialisable_json(self) -> str:
        """``tokenizer.json`` text: the pipeline with BERT-style splitting, no segmentation."""
        custom = self._tokenizer.pre_tokenizer
        self._tokenizer.pre_tokenizer = serialisable_pre_tokenizer()
        try:
            return self._tokenizer.to_str()
        finally:
            self._tokenizer.pre_tokenizer = custom

    def save(self, directory: Path) -> None:
        directory = Path(directory)
        (directory / TOKENIZER_FILE).write_text(self.serialisable_json(), encoding="utf-8")
        wordmap = {
            "pos_tags": list(self.presegmenter.flagger.pos_tags),
            "max_segments": self.presegmenter.segmenter.max_segments,
            "functional": list(self.segment_vocabulary.functional),
            "lexemic": list(self.segment_vocabulary.lexemic),
            "hanta_version": hanta_version(),
        }
        (directory / WORDMAP_FILE).write_text(
            json.dumps(wordmap, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
        )

    @classmethod
    def load(cls, directory: Path) -> WordmapWordPiece:
        directory = Path(directory)
        path = directory / WORDMAP_FILE
        if not path.is_file():
            raise TokstudyError(
                f"{directory}: not a wordmap_wordpiece directory (no {WORDMAP_FILE})"
            )
        wordmap = json.loads(path.read_text(encoding="utf-8"))
        if wordmap["hanta_version"] != hanta_version():
            log.warning(
                "%s was made with HanTa %s, HanTa %s is installed: tags may differ",
                path,
                wordmap["hanta_version"],
                hanta_version(),
            )
        vocabulary = SegmentVocabulary(tuple(wordmap["functional"]), tuple(wordmap["lexemic"]))
        segmenter = Segmenter(vocabulary.entries, max_segments=wordmap["max_segments"])
        presegmenter = WordmapPreSegmenter(HanTaFlagger(wordmap["pos_tags"]), segmenter)
        tokenizer = HFTokenizer.from_file(str(directory / TOKENIZER_FILE))
        return cls(tokenizer, presegmenter, vocabulary)

    def to_transformers(self) -> PreTrainedTokenizerFast:
        from tokstudy.tokenizers.wordmap.transformers_wrapper import WordmapTokenizerFast

        backend = HFTokenizer.from_str(self.serialisable_json())
        backend.post_processor = processors.TemplateProcessing(
            single=f"{CLS} $A {SEP}",
            pair=f"{CLS} $A {SEP} $B:1 {SEP}:1",
            special_tokens=[(CLS, backend.token_to_id(CLS)), (SEP, backend.token_to_id(SEP))],
        )
        return WordmapTokenizerFast.wrap(backend, self.presegmenter)
