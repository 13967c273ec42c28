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
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, normalizers, trainers

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.adapters.hf_tokenizers import (
    TOKENIZER_FILE,
    WORDPIECE_PREFIX,
    HFTokenizersAdapter,
    HFWordPiece,
    read_tokenizer_json,
    with_cls_sep,
)
from tokstudy.tokenizers.base import (
    SPECIAL_TOKENS,
    UNK,
    TrainSpec,
    corpus_lines,
    enforce_size_policy,
)
from tokstudy.tokenizers.params import Param
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
#: parameters handed to the WordPiece trainer when given
TRAINER_PARAMS = ("min_frequency", "limit_alphabet")


def word_type_counts(corpus: Path, tokenizer: HFTokenizer) -> Counter[str]:
    """Word types of a corpus after the tokenizer's normaliser and BERT-style splitting."""
    splitter = serialisable_pre_tokenizer()
    normalizer = tokenizer.normalizer
    counts: Counter[str] = Counter()
    for line in corpus_lines(corpus):
        text = normalizer.normalize_str(line) if normalizer is not None else line
        counts.update(word for word, _ in splitter.pre_tokenize_str(text))
    return counts


class WordmapWordPiece(HFTokenizersAdapter):
    """WordPiece on text pre-segmented by Wordmap (Jung, 2023)."""

    name = "wordmap_wordpiece"
    deterministic = False  # the WordPiece trainer's tie-breaking (see HFWordPiece)
    params_spec: ClassVar[dict[str, Param]] = {
        "pos_tags": Param(list, list(DEFAULT_POS_TAGS), items=Param(str)),
        "z_threshold": Param((int, float), 0.0),
        "min_affix_count": Param(int, 2, minimum=1),
        "min_stem_length": Param(int, 2, minimum=1),
        "max_segments": Param(int, 8, minimum=1),
        "max_lexemes": Param(int, 5000, minimum=1),
        "min_frequency": Param(int, minimum=0),
        "limit_alphabet": Param(int, minimum=1),
    }
    make_canonical = staticmethod(HFWordPiece.make_canonical)

    def __init__(
        self,
        tokenizer: HFTokenizer,
        presegmenter: WordmapPreSegmenter,
        segment_vocabulary: SegmentVocabulary,
    ) -> None:
        tokenizer.pre_tokenizer = presegmenter.hf_pre_tokenizer()
        super().__init__(tokenizer)
        self.presegmenter = presegmenter
        self.segment_vocabulary = segment_vocabulary

    @classmethod
    def fit(cls, corpus: Path, spec: TrainSpec) -> WordmapWordPiece:
        params = spec.params
        flagger = HanTaFlagger(params["pos_tags"])
        tokenizer = HFTokenizer(models.WordPiece(unk_token=UNK))
        tokenizer.normalizer = normalizers.NFKC()
        tokenizer.decoder = decoders.WordPiece(prefix=WORDPIECE_PREFIX, cleanup=False)
        counts = word_type_counts(corpus, tokenizer)
        lexemes = lexeme_list(counts, flagger, params["max_lexemes"])
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
            z_threshold=float(params["z_threshold"]),
            min_affix_count=params["min_affix_count"],
            min_stem_length=params["min_stem_length"],
        )
        segmenter = Segmenter(vocabulary.entries, max_segments=params["max_segments"])
        presegmenter = WordmapPreSegmenter(flagger, segmenter)
        tokenizer.pre_tokenizer = presegmenter.hf_pre_tokenizer()
        trainer = trainers.WordPieceTrainer(
            vocab_size=spec.vocab_size,
            special_tokens=list(SPECIAL_TOKENS),
            continuing_subword_prefix=WORDPIECE_PREFIX,
            show_progress=False,
            **{key: params[key] for key in TRAINER_PARAMS if key in params},
        )
        trained = cls.train_library(tokenizer, trainer, corpus, spec)
        adapter = cls(trained, presegmenter, vocabulary)
        enforce_size_policy(cls.name, spec, len(adapter.vocab))
        return adapter

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
        try:
            wordmap = json.loads(path.read_text(encoding="utf-8"))
            vocabulary = SegmentVocabulary(tuple(wordmap["functional"]), tuple(wordmap["lexemic"]))
            max_segments, pos_tags = wordmap["max_segments"], wordmap["pos_tags"]
            made_with = wordmap["hanta_version"]
        except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError) as exc:
            raise TokstudyError(f"{path}: not a Wordmap file ({exc})") from None
        if made_with != hanta_version():
            log.warning(
                "%s was made with HanTa %s, HanTa %s is installed: tags may differ",
                path,
                made_with,
                hanta_version(),
            )
        segmenter = Segmenter(vocabulary.entries, max_segments=max_segments)
        presegmenter = WordmapPreSegmenter(HanTaFlagger(pos_tags), segmenter)
        tokenizer = read_tokenizer_json(directory / TOKENIZER_FILE)
        return cls(tokenizer, presegmenter, vocabulary)

    def to_transformers(self) -> PreTrainedTokenizerFast:
        from tokstudy.tokenizers.wordmap.transformers_tokenizer import WordmapTokenizerFast

        return WordmapTokenizerFast.wrap(with_cls_sep(self.serialisable_json()), self.presegmenter)
