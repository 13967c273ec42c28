"""tokstudy from Python (a notebook, a script): tokenizers in, tables out.

Each function is the study's own code with plain arguments, so its numbers are the
workflow's and ``tokstudy metrics``'s:

- :func:`load_tokenizer`: a tokenizer from a file, a folder or a study's cell
  (``"en|sp_unigram|380"``);
- :func:`train_tokenizer`: train one of the study's tokenizers on your text;
- :func:`measure`: intrinsic metrics of tokenizers on text, one row per tokenizer and text;
- :func:`segment`: how tokenizers cut lines, one row per tokenizer and line;
- :func:`correlate`: the size-controlled correlation of ``tokstudy correlate`` on a
  table of cells.

Texts are cleaned exactly as a study's corpora are (line endings, byte-order mark,
whitespace, empty and long lines; invalid UTF-8 is an error naming file and line). A
``str`` or :class:`~pathlib.Path` is a file; a list of strings is the text itself, one
line or more per string. ``import tokstudy`` gives these functions as
``tokstudy.measure`` and so on (docs/api.md).
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from tokstudy.corpora.prepare import MAX_LINE_BYTES, clean_corpus_file, cleaning_changes
from tokstudy.errors import TokstudyError
from tokstudy.files.lines import write_text_lines
from tokstudy.metrics.compute import BATCH_LINES, METRICS, check_metric_names, compute_metrics
from tokstudy.tokenizers.base import Tokenizer

if TYPE_CHECKING:
    from tokstudy.analyses.correlation.run import Correlations

log = logging.getLogger(__name__)

#: a file (``str`` or ``Path``) or the text itself (strings, one line or more each)
Texts = str | Path | Sequence[str]
#: a tokenizer, a path :func:`load_tokenizer` loads, or several by name
Tokenizers = Tokenizer | str | Path | Mapping[str, Tokenizer | str | Path]
#: the separator of a cell's key: ``language|tokenizer|size``, as ``tokstudy serve`` names it
KEY_SEPARATOR = "|"


def load_tokenizer(path_or_key: str | Path, results: str | Path | None = None) -> Tokenizer:
    """A tokenizer: a tokstudy tokenizer folder, an HF ``tokenizer.json`` (or a folder with
    one), a SentencePiece ``.model`` or a tiktoken file; or, with ``results`` (a study's
    results folder), a cell of that study by its key ``language|tokenizer|size``
    (``"en|sp_unigram|380"``, ``"en|gpt_4o|pretrained"``), as the study page names it."""
    from tokstudy.tokenizers.external import load_any

    if results is not None:
        return load_any(_cell_directory(str(path_or_key), Path(results)))
    path = Path(path_or_key)
    if not path.exists():
        raise TokstudyError(f"{path}: no such tokenizer file or folder")
    return load_any(path)


def _cell_directory(key: str, results: Path) -> Path:
    """The tokenizer folder of the cell ``key`` of the study in ``results``."""
    from tokstudy.report.page.serve import discover_cells

    if not results.is_dir():
        raise TokstudyError(f"{results}: no such results folder")
    cells = {cell.key: cell for cell in discover_cells(results)}
    if key not in cells:
        known = ", ".join(sorted(cells)[:8]) + (", …" if len(cells) > 8 else "")
        raise TokstudyError(
            f"{results}: no cell {key!r} (a key is language{KEY_SEPARATOR}tokenizer"
            f"{KEY_SEPARATOR}size; cells: {known or 'none'})"
        )
    return Path(cells[key].directory)


def _tokenizers(tokenizers: Tokenizers) -> dict[str, Tokenizer]:
    """Tokenizers by name: a mapping's own names, else the path or the adapter's name."""
    if isinstance(tokenizers, Mapping):
        given = dict(tokenizers)
    elif isinstance(tokenizers, Tokenizer):
        given = {tokenizers.name: tokenizers}
    else:
        given = {str(tokenizers): tokenizers}
    if not given:
        raise TokstudyError("no tokenizer given")
    return {
        str(name): value if isinstance(value, Tokenizer) else load_tokenizer(value)
        for name, value in given.items()
    }


def _text_sources(texts: Texts | Mapping[str, Texts]) -> dict[str, Texts]:
    """Texts by name: a mapping's own names, a file's path, ``text`` for a list of lines."""
    if isinstance(texts, Mapping):
        return {str(name): value for name, value in texts.items()}
    if isinstance(texts, str | Path):
        return {str(texts): texts}
    return {"text": texts}


def _cleaned(texts: Texts, destination: Path, name: str, **cleaning: Any) -> Path:
    """``texts`` cleaned as a study's corpus into ``destination`` (returned); ``name``
    names them in errors and notes."""
    if isinstance(texts, str | Path):
        source = Path(texts)
        label = f"texts {source}" if name == str(texts) else f"texts {name!r} ({source})"
    else:
        label = f"texts {name!r}"
        if not all(isinstance(line, str) for line in texts):
            raise TokstudyError(f"{label}: expected a file or a list of strings")
        source = destination.with_suffix(".raw")
        try:
            write_text_lines(source, texts)
        except UnicodeEncodeError as exc:
            raise TokstudyError(f"{label}: not Unicode text ({exc.reason})") from exc
    changes = cleaning_changes(clean_corpus_file(source, destination, label, **cleaning))
    if changes:
        log.warning("%s cleaned: %s", label, changes)
    return destination


def measure(
    tokenizers: Tokenizers,
    texts: Texts | Mapping[str, Texts],
    metrics: Sequence[str] | None = None,
    *,
    on_invalid_utf8: str = "error",
    max_line_bytes: int = MAX_LINE_BYTES,
    batch_lines: int = BATCH_LINES,
) -> pd.DataFrame:
    """Intrinsic metrics (``fertility``, ``f95``, …; all of them unless ``metrics`` names
    some) of each tokenizer on each text: one row per tokenizer and text (columns
    ``tokenizer``, ``texts``, ``vocab_size``, then one per metric). ``texts``: a file, a
    list of lines, or several of them by name; ``on_invalid_utf8`` (``error`` or
    ``replace``) and ``max_line_bytes`` clean them as a study's ``corpus_defaults`` do.

    >>> import tokstudy
    >>> tokstudy.measure(tok, ["the cat sat", "on the mat"], ["fertility"])  # doctest: +SKIP
    """
    chosen = list(metrics) if metrics is not None else list(METRICS)
    check_metric_names(chosen)
    by_name = _tokenizers(tokenizers)
    rows = []
    with tempfile.TemporaryDirectory(prefix="tokstudy-") as folder:
        cleaning = {"on_invalid_utf8": on_invalid_utf8, "max_line_bytes": max_line_bytes}
        files = {
            name: _cleaned(value, Path(folder) / f"{number}.txt", name, **cleaning)
            for number, (name, value) in enumerate(_text_sources(texts).items())
        }
        for name, tokenizer in by_name.items():
            for text_name, path in files.items():
                values, _ = compute_metrics(tokenizer, path, batch_lines)
                rows.append({"tokenizer": name, "texts": text_name} | values)
    shown = ["vocab_size", *(metric for metric in chosen if metric != "vocab_size")]
    return pd.DataFrame(rows, columns=["tokenizer", "texts", *shown])


def segment(tokenizers: Tokenizers, text: str | Sequence[str]) -> pd.DataFrame:
    """How each tokenizer cuts each non-empty line of ``text`` (a string, or a list of
    lines): one row per tokenizer and line (``tokenizer``, ``line``, ``text``,
    ``n_tokens``, ``tokens``: the tokens as the study page shows them, byte-level ones
    read as text, bytes that are not whole characters as hex, and ``ids``)."""
    from tokstudy.report.page.segments import Frequencies, segment_cell

    given = text.splitlines() if isinstance(text, str) else list(text)
    lines = [line for line in given if line.strip()]
    rows = []
    for name, tokenizer in _tokenizers(tokenizers).items():
        cell = segment_cell(tokenizer, lines, Frequencies(None))
        for number, (line, ids) in enumerate(zip(lines, cell["lines"], strict=True)):
            tokens = [cell["tokens"][str(token_id)][0] for token_id in ids]
            rows.append(
                {
                    "tokenizer": name,
                    "line": number,
                    "text": line,
                    "n_tokens": len(ids),
                    "tokens": tokens,
                    "ids": list(ids),
                }
            )
    return pd.DataFrame(rows, columns=["tokenizer", "line", "text", "n_tokens", "tokens", "ids"])


def train_tokenizer(
    name: str,
    texts: Texts,
    vocab_size: int | None = None,
    *,
    params: Mapping[str, Any] | None = None,
    seed: int = 42,
    size_policy: str = "error",
    directory: str | Path | None = None,
) -> Tokenizer:
    """Train the study's tokenizer ``name`` (``sp_bpe``, ``hf_unigram``, ``hft``, …:
    config/README.md) on ``texts`` (cleaned as a study's corpus) at ``vocab_size`` with its
    ``params`` (``size_policy``: ``error`` when the text cannot give ``vocab_size``, or
    ``adjust`` to keep the size reached); with ``directory``, saved there as a study saves
    a cell (the library's files, ``vocab.tsv``, ``meta.json``), so :func:`load_tokenizer`
    reads it back."""
    from tokstudy.tokenizers.base import TrainSpec
    from tokstudy.tokenizers.build import train_to_directory
    from tokstudy.tokenizers.registry import adapter_class

    spec = TrainSpec(
        vocab_size=vocab_size,
        params=dict(params or {}),
        seed=seed,
        size_policy=size_policy,
        label="texts",
    )
    with tempfile.TemporaryDirectory(prefix="tokstudy-") as folder:
        corpus = _cleaned(texts, Path(folder) / "corpus.txt", "texts")
        if directory is None:
            return adapter_class(name).train(corpus, spec)
        return train_to_directory(name, corpus, spec, Path(directory))


def correlate(
    cells: pd.DataFrame,
    scores: Sequence[str],
    *,
    metrics: Sequence[str] = (),
    exclude: Sequence[str] = (),
    bootstrap_samples: int = 1000,
    permutations: int = 20000,
    confidence: float = 0.95,
    seed: int = 0,
    primary: str = "",
) -> Correlations:
    """``tokstudy correlate`` on a table of cells (columns ``language``, ``tokenizer``,
    ``vocab_size``, ``seed`` and numbers; one row per cell and seed): each intrinsic
    column's partial Spearman with each of ``scores`` given log vocabulary size, its
    bootstrap interval, the within-size permutation p and Holm's adjustment. Returns the
    tables ``table``, ``ranking``, ``mixed`` and ``family`` (docs/statistics.md); columns
    left out are logged as warnings."""
    import io

    from tokstudy.analyses.correlation.cells import ColumnChoice, check_cells
    from tokstudy.analyses.correlation.run import correlate as correlate_cells
    from tokstudy.analyses.correlation.settings import CorrelationSettings

    settings = CorrelationSettings(
        bootstrap_samples=bootstrap_samples,
        permutations=permutations,
        confidence=confidence,
        seed=seed,
        primary=primary,
    )
    choice = ColumnChoice(tuple(metrics), tuple(exclude))
    wanted = list(dict.fromkeys(scores))
    # read back from CSV text as the command line reads its file: the same checks
    text = io.StringIO(pd.DataFrame(cells).to_csv(index=False))
    frame = pd.read_csv(text, dtype=str, keep_default_na=False, na_values=[""])
    checked = check_cells(frame, wanted, "cells", choice=choice)
    for note in choice.notes():
        log.warning("%s", note)
    return correlate_cells(checked, [s for s in wanted if s in checked.columns], settings)
