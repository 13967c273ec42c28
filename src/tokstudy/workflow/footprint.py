"""What a study asks of a machine, estimated before it runs: the disk its results folder
fills and the memory its largest job asks for, against the machine's free disk and RAM
(``tokstudy check-config``).

Disk, per language: the prepared text (train and held-out: the text of its sources, capped
by ``max_bytes``), and per model cell its pre-tokenized corpus (the training text's tokens
at :data:`BYTES_PER_TOKEN` bytes each, 2 or 4 bytes an id, 8 bytes of offsets per line of
:data:`BYTES_PER_LINE`; twice that while shards are merged). A source's text is its size
on disk: plain text as it is, a Parquet file's uncompressed text column from its footer,
a gzip file :data:`GZIP_EXPANSION` times its size; a Hub dataset's is its ``max_bytes``
(unknown without one). RAM: the ``mem_mb`` of the rules the study runs (the resources
table and the study's ``resources:``), whose peaks docs/benchmarks.md (*Gigabytes of
text*) measured flat in the corpus's size.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tokstudy.workflow.plan import StudyPlan

#: UTF-8 bytes of text per token: 4.95 measured for English and an 8,000-token HF BPE
#: (docs/benchmarks.md, *Gigabytes of text*); larger vocabularies have more bytes per
#: token, so the estimate errs towards more disk
BYTES_PER_TOKEN = 4.9
#: bytes of text per line (the shipped English lines have about 105; web documents' more)
BYTES_PER_LINE = 100
#: text per byte of a gzip-compressed text file (a typical ratio, not measured per file)
GZIP_EXPANSION = 3.0
GB = 1e9
#: the rules of each section whose memory a study needs
CORE_RULES = ("prepare_corpus", "train_tokenizer", "compute_metrics")
NMT_RULES = ("nmt_split", "nmt_train", "nmt_translate")


@dataclass(frozen=True)
class Footprint:
    """A study's estimated disk (bytes per kind of file) and its largest job's memory."""

    disk: dict[str, float]
    unknown: tuple[str, ...]
    job_rule: str
    job_mem_mb: int

    @property
    def disk_total(self) -> float:
        """Bytes of every kind of file together."""
        return sum(self.disk.values())


def file_text_bytes(path: Path, field: str) -> float:
    """The text a source file holds, estimated from its size (module docstring)."""
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        metadata = pq.ParquetFile(path).metadata
        names = [metadata.schema.column(i).name for i in range(metadata.num_columns)]
        if field in names:
            column = names.index(field)
            groups = range(metadata.num_row_groups)
            return sum(metadata.row_group(g).column(column).total_uncompressed_size for g in groups)
    expansion = GZIP_EXPANSION if path.suffix == ".gz" else 1.0
    return path.stat().st_size * expansion


def language_text(plan: StudyPlan, language: str) -> float | None:
    """The text a language's corpus takes (None: not known before it is read)."""
    corpora = plan.corpora
    cap = corpora.corpus_setting(language, "max_bytes")
    source = corpora.source(language)
    if source["dataset"] is not None and "hub" in source["dataset"]:
        return cap
    field = source["field"]
    text = sum(file_text_bytes(path, field) for path in corpora.source_files(language))
    return text if cap is None else min(text, cap)


def _id_bytes(vocab_size: int | None) -> int:
    return 2 if vocab_size is not None and vocab_size <= 1 << 16 else 4


def footprint(plan: StudyPlan) -> Footprint:
    """The estimate of :class:`Footprint` for a study's plan."""
    text = {language: language_text(plan, language) for language in plan.study.languages}
    known = {language: size for language, size in text.items() if size is not None}
    disk = {"prepared corpora": sum(known.values())}
    section = plan.models.section
    shards = 2 if section.pretokenize_shards > 1 else 1
    pretokenized = 0.0
    for cell in section.cells():
        train = known.get(cell.language, 0.0) * (1 - _heldout_share(plan, cell.language))
        per_token = _id_bytes(cell.vocab_size) / BYTES_PER_TOKEN
        pretokenized += train * per_token + train / BYTES_PER_LINE * 8
    if pretokenized:
        disk["pretokenized corpora"] = pretokenized * shards
    rules = [*CORE_RULES, *plan.models.rules()]
    if plan.nmt.nmt is not None:
        rules += NMT_RULES
    mem = {rule: int(plan.resources(rule)["mem_mb"]) for rule in rules}
    largest = max(mem, key=lambda rule: (mem[rule], rule))
    unknown = tuple(sorted(language for language, size in text.items() if size is None))
    return Footprint(disk, unknown, largest, mem[largest])


def _heldout_share(plan: StudyPlan, language: str) -> float:
    """The held-out share of a corpus (a count of lines: none worth counting)."""
    heldout = plan.corpora.corpus_setting(language, "heldout")
    return heldout if heldout < 1 else 0.0


def machine_ram() -> int:
    """Bytes of memory of this machine."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def free_disk(folder: Path) -> int:
    """Free bytes on the filesystem that holds ``folder`` (or its nearest existing parent)."""
    folder = Path(folder).resolve()
    while not folder.exists():
        folder = folder.parent
    return shutil.disk_usage(folder).free


def size(count: float) -> str:
    """Bytes in GB (MB below a tenth of a GB)."""
    return f"{count / GB:.1f} GB" if count >= GB / 10 else f"{count / 1e6:.0f} MB"


def fit_report(plan: StudyPlan, ram: int | None = None, free: int | None = None) -> list[str]:
    """Lines saying whether this machine's RAM and the disk of the results folder fit the
    study (``ram`` and ``free`` in bytes: this machine's unless given)."""
    needs = footprint(plan)
    ram = machine_ram() if ram is None else ram
    free = free_disk(Path(plan.study.results_dir)) if free is None else free
    parts = ", ".join(f"{kind} {size(count)}" for kind, count in needs.disk.items())
    disk_fits = "fits" if needs.disk_total <= free else "does NOT fit"
    lines = [
        f"disk: about {size(needs.disk_total)} under {plan.study.results_dir} ({parts}); "
        f"{size(free)} free there: {disk_fits}"
    ]
    if needs.unknown:
        lines.append(
            f"disk: not counted: the text of {', '.join(needs.unknown)} (a Hub dataset "
            "without max_bytes)"
        )
    ram_fits = "fits" if needs.job_mem_mb * 1e6 <= ram else "does NOT fit"
    lines.append(
        f"RAM: the largest job asks {needs.job_mem_mb:,} MB ({needs.job_rule}, its mem_mb); "
        f"this machine has {ram / 1e6:,.0f} MB: {ram_fits}"
    )
    return lines
