"""Universal Dependencies treebanks: sentences, splits and sentence labels.

Sentences are read with ``conllu``; multiword-token ranges (``3-4``) and empty nodes
(``8.1``) are skipped, so a sentence is its syntactic words with their UPOS and features.

Splits: a treebank with a ``train`` file uses train / dev (as validation) / test. A
treebank without one (e.g. the ``dev``+``test`` folders in ``shared/ud``) gets a seeded
split of dev: a shuffled ``validation_fraction`` of it is validation, the rest is train;
test always stays test. A treebank with neither train nor dev, or without test, is an
error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tokstudy.corpora.ud import iter_conllu
from tokstudy.errors import TokstudyError


@dataclass(frozen=True)
class UDSentence:
    """One sentence: its text, syntactic words, UPOS tags and features."""

    sent_id: str
    text: str
    words: tuple[str, ...]
    upos: tuple[str, ...]
    feats: tuple[dict[str, str], ...]


def read_conllu(path: Path) -> list[UDSentence]:
    """Sentences of a CoNLL-U file (``.conllu`` or ``.conllu.gz``), read with
    :func:`tokstudy.corpora.ud.iter_conllu`; sentences without syntactic words are left out."""
    sentences = []
    for index, tokenlist in enumerate(iter_conllu(path)):
        words = [t for t in tokenlist if isinstance(t["id"], int)]
        if not words:
            continue
        sentences.append(
            UDSentence(
                sent_id=tokenlist.metadata.get("sent_id", str(index)),
                text=tokenlist.metadata.get("text") or " ".join(t["form"] for t in words),
                words=tuple(t["form"] for t in words),
                upos=tuple(t["upos"] for t in words),
                feats=tuple(dict(t["feats"] or {}) for t in words),
            )
        )
    return sentences


def _split_file(treebank: Path, split: str) -> Path | None:
    found = sorted(treebank.glob(f"*-ud-{split}.conllu")) + sorted(
        treebank.glob(f"*-ud-{split}.conllu.gz")
    )
    if len(found) > 1:
        raise TokstudyError(f"{treebank}: several {split} files: {', '.join(map(str, found))}")
    return found[0] if found else None


def ud_splits(
    treebank: Path, *, seed: int = 0, validation_fraction: float = 0.1
) -> dict[str, list[UDSentence]]:
    """``train``, ``validation`` and ``test`` sentences of a treebank folder (see module doc)."""
    treebank = Path(treebank)
    if not treebank.is_dir():
        raise TokstudyError(f"{treebank}: UD treebank folder not found")
    files = {split: _split_file(treebank, split) for split in ("train", "dev", "test")}
    if files["test"] is None:
        raise TokstudyError(f"{treebank}: no *-ud-test.conllu(.gz) file")
    test = read_conllu(files["test"])
    if files["train"] is not None:
        dev = read_conllu(files["dev"]) if files["dev"] is not None else []
        return {"train": read_conllu(files["train"]), "validation": dev, "test": test}
    if files["dev"] is None:
        raise TokstudyError(f"{treebank}: neither a train nor a dev file to train on")
    dev = read_conllu(files["dev"])
    train, validation = seeded_split(dev, validation_fraction, seed)
    return {"train": train, "validation": validation, "test": test}


def seeded_split(
    items: Sequence[UDSentence], fraction: float, seed: int
) -> tuple[list[UDSentence], list[UDSentence]]:
    """(rest, held-out ``fraction``) of ``items`` after a shuffle seeded by ``seed``."""
    order = np.random.default_rng(seed).permutation(len(items))
    n_held = max(1, round(fraction * len(items)))
    held = sorted(order[:n_held])
    rest = sorted(order[n_held:])
    return [items[i] for i in rest], [items[i] for i in held]


def has_feature(sentence: UDSentence, feature: str, upos: Sequence[str] = ("VERB", "AUX")) -> bool:
    """Whether a word with a UPOS in ``upos`` carries ``feature`` (``Name=Value``)."""
    name, value = feature.split("=", 1)
    return any(
        tag in upos and value in feats.get(name, "").split(",")
        for tag, feats in zip(sentence.upos, sentence.feats, strict=True)
    )


def feature_labels(
    sentences: Sequence[UDSentence], feature: str, upos: Sequence[str] = ("VERB", "AUX")
) -> list[tuple[str, str]]:
    """``(text, "yes"|"no")`` per sentence: whether it has ``feature`` (see :func:`has_feature`)."""
    return [(s.text, "yes" if has_feature(s, feature, upos) else "no") for s in sentences]
