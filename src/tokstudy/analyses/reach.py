"""Which tokenizer an analysis scores on which language: a tokenizer trained per language
on its language, a pretrained one on every language (or those of its ``languages`` list).

Used by the analyses that score every tokenizer of the study language by language
(``morphscore``, ``robustness``); each entry is a :class:`tokstudy.cells.ParityTokenizer`.
"""

from __future__ import annotations

from collections.abc import Iterable

from tokstudy.analyses.parity.plan import trained_entry
from tokstudy.cells import ParityTokenizer
from tokstudy.tokenizers.plan import TokenizersPlanner


def tokenizers_reaching(
    tokenizers: TokenizersPlanner, languages: Iterable[str]
) -> list[ParityTokenizer]:
    """Trained cells of ``languages``, then the pretrained tokenizers with the languages
    of ``languages`` they cover (sorted); a tokenizer covering none is left out."""
    wanted = set(languages)
    entries = [trained_entry(tokenizers, j) for j in tokenizers.cells() if j.language in wanted]
    for name in tokenizers.pretrained_names():
        listed = tokenizers.pretrained[name].get("languages")
        reach = tuple(sorted(wanted & set(listed))) if listed else tuple(sorted(wanted))
        if reach:
            entries.append(
                ParityTokenizer(name, "pretrained", tokenizers.pretrained_dir(name), reach)
            )
    return entries
