"""A silver-label German POS treebank: prepared corpus text tagged by HanTa, as CoNLL-U.

For studies without Universal Dependencies data (the offline default), POS fine-tuning
runs on **silver** labels: every sentence is split into words by :data:`WORD_PATTERN`,
tagged in context with HanTa's German model (``HanoverTagger.tag_sent``), and written
with ``XPOS`` = the STTS tag and ``UPOS`` mapped from it by :data:`STTS_TO_UPOS` (the
usual STTS → UD mapping of the German UD treebanks; unmapped tags become ``X``). The
labels are a tagger's output, not gold annotation: scores measure how well a model
learns HanTa's tagging, which is enough to compare tokenizers with one another.

Splits: the corpus's held-out lines are the test file; its training lines are shuffled
(seeded) and a ``dev_fraction`` of them is the dev file, the rest the train file.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from pathlib import Path

import conllu

from tokstudy.errors import TokstudyError
from tokstudy.files.lines import read_nonblank_lines
from tokstudy.models.ud_sentences import seeded_split
from tokstudy.tokenizers.wordmap.tagging import load_hanta, stts

log = logging.getLogger(__name__)

#: words: letters/digits (with inner hyphens or apostrophes), or one other non-space character
WORD_PATTERN = re.compile(r"\w+(?:[-'’]\w+)*|[^\w\s]")

#: STTS tag → UPOS
STTS_TO_UPOS: dict[str, str] = {
    "ADJA": "ADJ",
    "ADJD": "ADJ",
    "ADV": "ADV",
    "APPR": "ADP",
    "APPRART": "ADP",
    "APPO": "ADP",
    "APZR": "ADP",
    "ART": "DET",
    "CARD": "NUM",
    "FM": "X",
    "ITJ": "INTJ",
    "KOUI": "SCONJ",
    "KOUS": "SCONJ",
    "KON": "CCONJ",
    "KOKOM": "CCONJ",
    "NN": "NOUN",
    "NE": "PROPN",
    "PDS": "PRON",
    "PDAT": "DET",
    "PIS": "PRON",
    "PIAT": "DET",
    "PIDAT": "DET",
    "PPER": "PRON",
    "PPOSS": "PRON",
    "PPOSAT": "DET",
    "PRELS": "PRON",
    "PRELAT": "DET",
    "PRF": "PRON",
    "PWS": "PRON",
    "PWAT": "DET",
    "PWAV": "ADV",
    "PAV": "ADV",
    "PROAV": "ADV",
    "PTKZU": "PART",
    "PTKNEG": "PART",
    "PTKVZ": "ADP",
    "PTKANT": "PART",
    "PTKA": "PART",
    "TRUNC": "X",
    "VVFIN": "VERB",
    "VVIMP": "VERB",
    "VVINF": "VERB",
    "VVIZU": "VERB",
    "VVPP": "VERB",
    "VAFIN": "AUX",
    "VAIMP": "AUX",
    "VAINF": "AUX",
    "VAPP": "AUX",
    "VMFIN": "AUX",
    "VMINF": "AUX",
    "VMPP": "AUX",
    "XY": "X",
    "$,": "PUNCT",
    "$.": "PUNCT",
    "$(": "PUNCT",
}


def upos_of(stts_tag: str) -> str:
    """The UPOS of an STTS tag (``X`` for tags outside the mapping)."""
    return STTS_TO_UPOS.get(stts_tag, "X")


def tag_sentence(text: str, sent_id: str) -> conllu.TokenList | None:
    """One sentence as a CoNLL-U token list with HanTa's tags (``None`` if it has no words)."""
    words = WORD_PATTERN.findall(text)
    if not words:
        return None
    tagged = load_hanta().tag_sent(words)
    tokens = [
        {
            "id": index,
            "form": word,
            "lemma": lemma,
            "upos": upos_of(stts(tag)),
            "xpos": stts(tag),
            "feats": None,
            "head": None,
            "deprel": None,
            "deps": None,
            "misc": None,
        }
        for index, (word, lemma, tag) in enumerate(tagged, start=1)
    ]
    return conllu.TokenList(tokens, metadata={"sent_id": sent_id, "text": text})


def write_conllu(lines: Sequence[str], prefix: str, path: Path) -> int:
    """Tag ``lines`` and write them as a CoNLL-U file; returns the number of sentences."""
    sentences = [tag_sentence(text, f"{prefix}-{i}") for i, text in enumerate(lines, start=1)]
    sentences = [s for s in sentences if s is not None]
    path.write_text("".join(s.serialize() for s in sentences), encoding="utf-8")
    return len(sentences)


def make_silver_treebank(
    train: Path, heldout: Path, out_dir: Path, *, name: str, seed: int, dev_fraction: float = 0.1
) -> Path:
    """Write ``{name}-ud-{train,dev,test}.conllu`` into ``out_dir`` (see the module doc)."""
    train_lines, test_lines = read_nonblank_lines(train), read_nonblank_lines(heldout)
    if len(train_lines) < 2 or not test_lines:
        raise TokstudyError(
            f"{train}, {heldout}: too few lines for a silver treebank "
            f"({len(train_lines)} train, {len(test_lines)} held-out)"
        )
    rest, dev = seeded_split(train_lines, dev_fraction, seed)
    splits = {"train": rest, "dev": dev, "test": test_lines}
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for split, lines in splits.items():
        count = write_conllu(lines, f"{name}-{split}", out_dir / f"{name}-ud-{split}.conllu")
        log.info("%s: %d silver-tagged sentences", split, count)
    return out_dir
