"""The shared tokenizer layer: declared parameters, the registry as the one list of names,
checksummed tokenizer directories, and SentencePiece's thread count and line-length limit."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import REPO, write_lines
from hypothesis import given
from hypothesis import strategies as st

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.base import TrainSpec
from tokstudy.tokenizers.build import train_to_directory
from tokstudy.tokenizers.directory import META_FILE
from tokstudy.tokenizers.params import OMITTED, Param, check_params
from tokstudy.tokenizers.registry import ADAPTERS, adapter_class, adapter_names, load_tokenizer

PACKAGE = REPO / "src/tokstudy/tokenizers"
SIZES = {"bbpe": 700}


def size_of(name: str) -> int | None:
    return SIZES.get(name, 400) if adapter_class(name).sized else None


# --- parameters -----------------------------------------------------------------------

SPEC = {
    "count": Param(int, 2, minimum=1),
    "ratio": Param((int, float), 0.5),
    "mode": Param(str, "a", choices=("a", "b")),
    "flag": Param(bool, False),
    "tags": Param(list, ["X"]),
    "extra": Param(int),
}


def test_defaults_are_filled_in_and_copied() -> None:
    first = check_params("t", {}, SPEC)
    assert first == {"count": 2, "ratio": 0.5, "mode": "a", "flag": False, "tags": ["X"]}
    first["tags"].append("Y")
    assert check_params("t", None, SPEC)["tags"] == ["X"]
    assert check_params("t", {"extra": 3}, SPEC)["extra"] == 3


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"cout": 2},
            r"^tokenizers\.t\.params: unknown parameter 'cout'; valid parameters: count,",
        ),
        ({"count": "2"}, r"^tokenizers\.t\.params\.count: must be an integer, got '2'$"),
        ({"count": True}, r"^tokenizers\.t\.params\.count: must be an integer, got True$"),
        ({"count": 0}, r"^tokenizers\.t\.params\.count: must be ≥ 1, got 0$"),
        ({"ratio": "x"}, r"^tokenizers\.t\.params\.ratio: must be an integer or a number"),
        ({"mode": "c"}, r"^tokenizers\.t\.params\.mode: must be one of a, b, got 'c'$"),
        ({"flag": 1}, r"^tokenizers\.t\.params\.flag: must be true or false, got 1$"),
        ({"tags": "X"}, r"^tokenizers\.t\.params\.tags: must be a list, got 'X'$"),
    ],
)
def test_bad_parameters_are_one_line_naming_the_key(params: dict, message: str) -> None:
    with pytest.raises(TokstudyError, match=message):
        check_params("t", params, SPEC)


@given(st.dictionaries(st.sampled_from(["a", "b", "c"]), st.integers()))
def test_open_ended_params_pass_extra_keys_unchanged(extra: dict[str, int]) -> None:
    checked = check_params("t", extra, {"count": Param(int, 2)}, open_ended=True)
    assert checked == {"count": 2, **extra}


def _wrong_value(param: Param) -> object:
    types = param.types if isinstance(param.types, tuple) else (param.types,)
    candidates = [True, "x", [1], {"k": 1}, 1.5]
    return next(v for v in candidates if not any(type(v) is t for t in types))


DECLARED = [(name, key) for name in adapter_names() for key in adapter_class(name).params_spec]


@pytest.mark.parametrize(("name", "key"), DECLARED)
def test_every_declared_parameter_is_checked_by_train(name: str, key: str, tmp_path: Path) -> None:
    corpus = write_lines(tmp_path / "c.txt", ["a b c"])
    bad = _wrong_value(adapter_class(name).params_spec[key])
    with pytest.raises(TokstudyError, match=rf"^tokenizers\.{name}\.params\.{key}: must be"):
        adapter_class(name).train(corpus, TrainSpec(size_of(name), {key: bad}))


@pytest.mark.parametrize("name", [n for n in adapter_names() if not adapter_class(n).open_params])
def test_closed_adapters_reject_unknown_parameters(name: str, tmp_path: Path) -> None:
    corpus = write_lines(tmp_path / "c.txt", ["a b c"])
    with pytest.raises(TokstudyError, match=rf"^tokenizers\.{name}\.params: unknown parameter"):
        adapter_class(name).train(corpus, TrainSpec(size_of(name), {"no_such_key": 1}))


@pytest.mark.parametrize("name", adapter_names())
def test_declared_defaults_pass_the_adapters_own_check(name: str) -> None:
    adapter = adapter_class(name)
    defaults = {
        key: param.default
        for key, param in adapter.params_spec.items()
        if param.default is not OMITTED
    }
    assert all(adapter.params_spec[key].problem(value) is None for key, value in defaults.items())
    # nothing given: every declared default, in declaration order (an adapter may resolve a
    # default, e.g. hft's marks None to the default marks); checking again changes nothing
    resolved = adapter.check_params({})
    assert list(resolved) == list(defaults)
    assert adapter.check_params(resolved) == resolved
    assert adapter.check_params(defaults) == resolved


@pytest.mark.parametrize("name", adapter_names())
def test_every_adapter_refuses_a_missing_or_non_utf8_corpus_in_one_line(
    name: str, tmp_path: Path
) -> None:
    spec = TrainSpec(size_of(name), label="xx")
    with pytest.raises(TokstudyError, match=r"nope\.txt: corpus file not found$"):
        adapter_class(name).train(tmp_path / "nope.txt", spec)
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"good line\nbad \xfe line\n")
    with pytest.raises(TokstudyError, match=r"bad\.txt: not UTF-8 \(invalid start byte"):
        adapter_class(name).train(bad, spec)


# --- one list of names ---------------------------------------------------------------


def test_every_adapter_is_one_module_of_the_adapters_package() -> None:
    # one layout: tokstudy/tokenizers/adapters/<module>.py, each module an adapter's home
    modules = {entry.location.split(":")[0] for entry in ADAPTERS.values()}
    package = "tokstudy.tokenizers.adapters"
    assert {module.rsplit(".", 1)[0] for module in modules} == {package}
    folder = REPO / "src" / package.replace(".", "/")
    files = {path.stem for path in folder.glob("*.py")} - {"__init__"}
    assert files == {module.rsplit(".", 1)[1] for module in modules}
    for name in adapter_names():
        assert adapter_class(name).__module__.startswith(package), name


def test_every_registered_tokenizer_is_documented_in_config_readme() -> None:
    text = (REPO / "config/README.md").read_text(encoding="utf-8")
    section = text.split("### Tokenizer parameters", 1)[1].split("\n## ", 1)[0]
    bullets = [line for line in section.splitlines() if line.startswith("- ")]
    documented = {name for line in bullets for name in re.findall(r"`([a-z0-9_]+)`", line[:80])}
    assert set(adapter_names()) <= documented


def test_no_code_outside_the_registry_lists_tokenizer_names() -> None:
    names = adapter_names()
    listing = []
    for folder in ("src", "workflow", "scripts"):
        for path in sorted((REPO / folder).rglob("*")):
            if path.suffix not in {".py", ".smk", ".yaml"} or path.name == "registry.py":
                continue
            text = path.read_text(encoding="utf-8")
            found = [n for n in names if re.search(rf"(?<![\w.]){n}(?!\w)", text)]
            if len(found) > len(names) // 2:
                listing.append(f"{path.relative_to(REPO)}: {len(found)} names")
    assert not listing


# --- checksummed tokenizer directories -------------------------------------------------


@pytest.fixture(scope="module")
def trained_dirs(tmp_path_factory: pytest.TempPathFactory, english_corpus: Path) -> Path:
    root = tmp_path_factory.mktemp("trained")
    for name in ("hf_bpe", "sp_unigram", "bbpe", "hft"):
        spec = TrainSpec(size_of(name), seed=7, label="en")
        train_to_directory(name, english_corpus, spec, root / name)
    return root


def _copy(trained_dirs: Path, name: str, tmp_path: Path, *, old_style: bool = False) -> Path:
    directory = Path(shutil.copytree(trained_dirs / name, tmp_path / name))
    if old_style:  # as written before meta.json recorded checksums
        meta = json.loads((directory / META_FILE).read_text(encoding="utf-8"))
        del meta["files"]
        (directory / META_FILE).write_text(json.dumps(meta), encoding="utf-8")
    return directory


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _load_error(directory: Path) -> str:
    with pytest.raises(TokstudyError) as caught:
        load_tokenizer(directory)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_meta_records_the_checksum_of_every_file(trained_dirs: Path) -> None:
    meta = json.loads((trained_dirs / "hf_bpe" / META_FILE).read_text(encoding="utf-8"))
    assert sorted(meta["files"]) == ["tokenizer.json", "vocab.tsv"]
    assert all(re.fullmatch(r"[0-9a-f]{64}", digest) for digest in meta["files"].values())


@pytest.mark.parametrize(
    ("name", "file"),
    [
        ("hf_bpe", "tokenizer.json"),
        ("hf_bpe", "vocab.tsv"),
        ("sp_unigram", "spm.model"),
        ("bbpe", "bbpe.json"),
        ("hft", "hft_vocab.tsv"),
    ],
)
def test_a_truncated_file_is_one_line_naming_it(
    trained_dirs: Path, tmp_path: Path, name: str, file: str
) -> None:
    directory = _copy(trained_dirs, name, tmp_path)
    _truncate(directory / file)
    assert re.search(rf"{re.escape(str(directory / file))}: corrupt", _load_error(directory))


def test_a_missing_listed_file_is_named(trained_dirs: Path, tmp_path: Path) -> None:
    directory = _copy(trained_dirs, "sp_unigram", tmp_path)
    (directory / "spm.model").unlink()
    assert f"{directory / 'spm.model'}: missing" in _load_error(directory)


@pytest.mark.parametrize("damage", ["truncate", "not_json", "no_name", "delete"])
def test_a_corrupt_or_missing_meta_json_is_one_line_naming_it(
    trained_dirs: Path, tmp_path: Path, damage: str
) -> None:
    directory = _copy(trained_dirs, "hf_bpe", tmp_path)
    meta = directory / META_FILE
    if damage == "truncate":
        _truncate(meta)
    elif damage == "not_json":
        meta.write_bytes(b"\xff\xfe garbage")
    elif damage == "no_name":
        meta.write_text('{"files": {}}', encoding="utf-8")
    else:
        meta.unlink()
    assert META_FILE in _load_error(directory)


def test_directories_without_checksums_still_load(trained_dirs: Path, tmp_path: Path) -> None:
    for name in ("hf_bpe", "sp_unigram"):
        loaded = load_tokenizer(_copy(trained_dirs, name, tmp_path, old_style=True))
        assert loaded.vocab == load_tokenizer(trained_dirs / name).vocab


@pytest.mark.parametrize(
    ("name", "file"), [("hf_bpe", "tokenizer.json"), ("sp_unigram", "spm.model")]
)
def test_without_checksums_a_truncated_file_is_still_one_line_naming_it(
    trained_dirs: Path, tmp_path: Path, name: str, file: str
) -> None:
    directory = _copy(trained_dirs, name, tmp_path, old_style=True)
    _truncate(directory / file)
    assert str(directory / file) in _load_error(directory)


# --- SentencePiece -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["sp_bpe", "sp_unigram"])
def test_sentencepiece_files_do_not_depend_on_the_thread_count(
    english_corpus: Path, tmp_path: Path, name: str
) -> None:
    for threads in (1, 2):
        spec = TrainSpec(400, seed=7, threads=threads, label="en")
        (tmp_path / f"{threads}").mkdir()
        adapter_class(name).train(english_corpus, spec).save(tmp_path / f"{threads}")
    assert (tmp_path / "1/spm.model").read_bytes() == (tmp_path / "2/spm.model").read_bytes()


@pytest.mark.parametrize("name", ["sp_bpe", "sp_unigram", "sp_bpe_hftpretok"])
def test_sentencepiece_trains_on_a_10000_byte_line(
    english_lines: list[str], tmp_path: Path, name: str
) -> None:
    long_line = "жж " * 2000  # 10,000 bytes; the only line with ж
    assert len(long_line.encode("utf-8")) == 10_000
    corpus = write_lines(tmp_path / "long.txt", [*english_lines[:500], long_line])
    tokenizer = adapter_class(name).train(corpus, TrainSpec(300, seed=7, label="en"))
    assert any("ж" in token for token in tokenizer.vocab)
