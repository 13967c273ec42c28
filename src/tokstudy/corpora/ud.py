"""Universal Dependencies treebanks: finding a language's folder, reading its words, and
the Parallel UD (PUD) treebanks' sentences keyed by ``# sent_id``."""

from __future__ import annotations

import gzip
import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import conllu

from tokstudy.errors import TokstudyError

log = logging.getLogger(__name__)

#: language code → (UD language name, preferred treebank)
UD_TREEBANKS: dict[str, tuple[str, str]] = {
    "am": ("Amharic", "ATT"),
    "ar": ("Arabic", "PADT"),
    "bn": ("Bengali", "BRU"),
    "cs": ("Czech", "PDT"),
    "de": ("German", "GSD"),
    "en": ("English", "EWT"),
    "fi": ("Finnish", "TDT"),
    "ga": ("Irish", "IDT"),
    "hi": ("Hindi", "HDTB"),
    "it": ("Italian", "ISDT"),
    "ja": ("Japanese", "GSD"),
    "lt": ("Lithuanian", "ALKSNIS"),
    "mr": ("Marathi", "UFAL"),
    "sv": ("Swedish", "Talbanken"),
}
CONLLU_PATTERNS = ("*.conllu", "*.conllu.gz")
#: a Parallel UD folder, and the file in it whose name gives the language code
PUD_FOLDER = "UD_*-PUD"
PUD_FILE = re.compile(r"(?P<code>[a-z]{2,3})_pud-ud-test\.conllu(?:\.gz)?")


@dataclass(frozen=True)
class UDWord:
    """A syntactic word that is also a surface token."""

    form: str
    lemma: str
    upos: str


def treebank_files(folder: Path) -> list[Path]:
    """The CoNLL-U files of a treebank folder, sorted."""
    return sorted(path for pattern in CONLLU_PATTERNS for path in Path(folder).glob(pattern))


def find_ud_treebank(ud_root: Path, language: str) -> Path | None:
    """The treebank folder for a language code, or ``None`` (logged) when there is none.

    The preferred treebank (``de`` → ``UD_German-GSD``) is taken when present, otherwise
    the first other ``UD_<Language>-*`` folder with CoNLL-U files, in name order.
    """
    ud_root = Path(ud_root)
    if language not in UD_TREEBANKS:
        log.info("no UD treebank known for language %r; analysis skipped", language)
        return None
    name, preferred = UD_TREEBANKS[language]
    candidates = [ud_root / f"UD_{name}-{preferred}"]
    if ud_root.is_dir():
        candidates += sorted(ud_root.glob(f"UD_{name}-*"))
    for folder in candidates:
        if folder.is_dir() and treebank_files(folder):
            if folder != candidates[0]:
                log.info(
                    "%s: using %s (preferred %s absent)", language, folder.name, candidates[0].name
                )
            return folder
    log.info("no UD %s treebank under %s; analysis for %r skipped", name, ud_root, language)
    return None


def iter_conllu(path: Path, errors: str = "strict") -> Iterator[conllu.TokenList]:
    """Sentences of a CoNLL-U file (``.conllu`` or ``.conllu.gz``): the one CoNLL-U reader.

    A missing file or invalid CoNLL-U is a :class:`TokstudyError` naming the file.
    ``errors`` is the UTF-8 decoding policy (``surrogateescape`` keeps invalid bytes, for a
    caller that reports them line by line).
    """
    path = Path(path)
    if not path.is_file():
        raise TokstudyError(f"{path}: no such file")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", errors=errors) as handle:
        try:
            yield from conllu.parse_incr(handle)
        except conllu.exceptions.ParseException as exc:
            raise TokstudyError(f"{path}: not valid CoNLL-U ({exc})") from exc


def iter_ud_words(paths: Iterable[Path]) -> Iterator[UDWord]:
    """Words of CoNLL-U files, skipping multiword tokens and their parts and empty nodes.

    The parts of a multiword token (German ``zum`` = ``zu`` + ``dem``) are not strings of
    the text, so neither the token nor its parts are yielded.
    """
    for path in paths:
        for sentence in iter_conllu(path):
            yield from _sentence_words(sentence)


def sentence_texts(path: Path) -> dict[str, str]:
    """``# sent_id`` → ``# text`` of every sentence of a CoNLL-U file, in file order.

    Every sentence must carry both comments and the ids must be unique: parallel treebanks
    are joined on the id, never on the position.
    """
    texts: dict[str, str] = {}
    for number, sentence in enumerate(iter_conllu(path), start=1):
        sent_id, text = sentence.metadata.get("sent_id"), sentence.metadata.get("text")
        if not sent_id or text is None:
            missing = "# sent_id" if not sent_id else "# text"
            raise TokstudyError(f"{path}: sentence {number} has no '{missing}' comment")
        if sent_id in texts:
            raise TokstudyError(f"{path}: sentence {number} repeats sent_id {sent_id!r}")
        texts[sent_id] = text
    return texts


def pud_treebanks(pud_root: Path) -> dict[str, Path]:
    """Language code → CoNLL-U file of every ``UD_<Language>-PUD`` folder under a root.

    The code is read from the file name (``de_pud-ud-test.conllu.gz`` → ``de``). A folder
    without exactly one such file, or two folders of one code, are errors naming them.
    """
    files: dict[str, Path] = {}
    for folder in sorted(Path(pud_root).glob(PUD_FOLDER)):
        found = [path for path in treebank_files(folder) if PUD_FILE.fullmatch(path.name)]
        if len(found) != 1:
            raise TokstudyError(
                f"{folder}: expected one <code>_pud-ud-test.conllu(.gz) file, found {len(found)}"
            )
        code = PUD_FILE.fullmatch(found[0].name)["code"]
        if code in files:
            raise TokstudyError(f"{found[0]}: language {code!r} also in {files[code]}")
        files[code] = found[0]
    return files


def _sentence_words(sentence: conllu.TokenList) -> Iterator[UDWord]:
    covered: set[int] = set()
    for token in sentence:
        ident = token["id"]
        if isinstance(ident, tuple) and ident[1] == "-":
            covered.update(range(ident[0], ident[2] + 1))
    for token in sentence:
        ident = token["id"]
        if isinstance(ident, int) and ident not in covered:
            yield UDWord(token["form"], token["lemma"] or "_", token["upos"] or "_")
