"""The HFT vocabulary: subword strings with their training frequencies, and its TSV file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tokstudy.errors import TokstudyError


@dataclass(frozen=True)
class HFTVocab:
    """Subwords (marks and characters first) and the frequency each had in training.

    Every character of a multi-character entry is an entry of its own, entries are unique
    and contain no whitespace (pre-tokens never do).
    """

    tokens: tuple[str, ...]
    freqs: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.tokens) != len(self.freqs):
            raise TokstudyError("hft vocabulary: tokens and frequencies differ in number")
        seen = set(self.tokens)
        if len(seen) != len(self.tokens):
            raise TokstudyError("hft vocabulary: duplicate entries")
        chars = set("".join(self.tokens))
        if "" not in seen and chars <= seen and not any(c.isspace() for c in chars):
            return
        for token in self.tokens:  # find the first bad entry
            if not token or any(c.isspace() for c in token):
                raise TokstudyError(f"hft vocabulary: invalid entry {token!r}")
            missing = [c for c in token if c not in seen]
            if missing:
                raise TokstudyError(
                    f"hft vocabulary: entry {token!r} uses characters that are not entries: "
                    f"{missing!r}"
                )

    def __len__(self) -> int:
        return len(self.tokens)

    def write_tsv(self, path: Path) -> None:
        """Write ``token<TAB>frequency`` lines in id order."""
        lines = [f"{tok}\t{freq}\n" for tok, freq in zip(self.tokens, self.freqs, strict=True)]
        Path(path).write_text("".join(lines), encoding="utf-8", newline="\n")

    @classmethod
    def read_tsv(cls, path: Path) -> HFTVocab:
        """Read what :meth:`write_tsv` wrote."""
        path = Path(path)
        if not path.is_file():
            raise TokstudyError(f"{path}: hft vocabulary file not found")
        tokens: list[str] = []
        freqs: list[int] = []
        text = path.read_text(encoding="utf-8")
        for number, line in enumerate(text.split("\n")[:-1], start=1):
            token, _, freq = line.rpartition("\t")
            if not token or not (freq.isascii() and freq.isdigit()):
                raise TokstudyError(f"{path}:{number}: expected 'token<TAB>frequency'")
            tokens.append(token)
            freqs.append(int(freq))
        try:
            return cls(tuple(tokens), tuple(freqs))
        except TokstudyError as err:
            raise TokstudyError(f"{path}: {err}") from None
