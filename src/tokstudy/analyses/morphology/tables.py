"""The morphological alignment on files: find each language's UD treebank, load the
tokenizers, write the table."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from tokstudy.analyses.morphology.alignment import alignment_summary, morphological_alignment
from tokstudy.analyses.morphology.spans import ENCODINGS
from tokstudy.analyses.table_files import write_table
from tokstudy.corpora.ud import find_ud_treebank, treebank_files
from tokstudy.tokenizers.registry import load_tokenizer

log = logging.getLogger(__name__)


def write_morphological_alignment(
    ud_root: Path, tokenizer_dirs: Mapping[tuple[str, str, str], Path], csv: Path, markdown: Path
) -> None:
    """Share of inflected UD words whose stem boundary is a token boundary, with its
    chance level, per job and encoding (in context, then alone).

    Languages without a UD treebank under ``ud_root`` are skipped with a logged note.
    """
    rows = []
    treebanks: dict[str, Path | None] = {}
    for (language, tokenizer, size), path in sorted(tokenizer_dirs.items()):
        if language not in treebanks:
            treebanks[language] = find_ud_treebank(Path(ud_root), language)
        if treebanks[language] is None:
            continue
        loaded = load_tokenizer(Path(path))
        for encoding in ENCODINGS:
            table = morphological_alignment(treebank_files(treebanks[language]), loaded, encoding)
            summary = alignment_summary(table).iloc[0].to_dict()
            rows.append(
                {
                    "language": language,
                    "tokenizer": tokenizer,
                    "vocab_size": size,
                    "treebank": treebanks[language].name,
                    "encoding": encoding,
                    **summary,
                }
            )
            log.info(
                "%s %s %s %s: aligned share %.3f (chance %.3f)",
                language,
                tokenizer,
                size,
                encoding,
                summary["aligned_share_types"],
                summary["chance_types"],
            )
    write_table(pd.DataFrame(rows), csv, markdown, "Morphological alignment with UD lemmas")
