"""The wordmap_wordpiece adapter trained on real German text (UD German GSD sentences)."""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

import conllu
import pytest
from conftest import SHARED
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import normalizers, pre_tokenizers

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.adapters.wordmap import WordmapWordPiece
from tokstudy.tokenizers.base import CLS, SEP, SPECIAL_TOKENS, TrainSpec

pytestmark = pytest.mark.shared


GSD_DEV = SHARED / "ud" / "UD_German-GSD" / "de_gsd-ud-dev.conllu.gz"
SIZE = 1000


@pytest.fixture(scope="module")
def german_lines() -> list[str]:
    with gzip.open(GSD_DEV, "rt", encoding="utf-8") as handle:
        return [sentence.metadata["text"] for sentence in conllu.parse_incr(handle)]


@pytest.fixture(scope="module")
def german_corpus(tmp_path_factory: pytest.TempPathFactory, german_lines: list[str]) -> Path:
    path = tmp_path_factory.mktemp("wordmap") / "de.txt"
    path.write_text("".join(line + "\n" for line in german_lines), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def tokenizer(german_corpus: Path) -> WordmapWordPiece:
    return WordmapWordPiece.train(german_corpus, TrainSpec(SIZE, seed=1, label="de"))


def bert_words(text: str) -> list[str]:
    normalized = normalizers.NFKC().normalize_str(text)
    return [word for word, _ in pre_tokenizers.BertPreTokenizer().pre_tokenize_str(normalized)]


def test_vocabulary_has_the_requested_size(tokenizer: WordmapWordPiece) -> None:
    assert len(tokenizer.vocab) == SIZE
    assert len(set(tokenizer.vocab)) == SIZE
    assert tokenizer.vocab[: len(SPECIAL_TOKENS)] == list(SPECIAL_TOKENS)


def test_no_token_crosses_a_segment_boundary(tokenizer: WordmapWordPiece) -> None:
    for word in ["verstehen", "gegangen", "aufgenommen", "entwickelt"]:
        pretokens = tokenizer.presegment(word)
        assert len(pretokens) > 1, word
        assert all(piece.startswith("##") for piece in pretokens[1:])
        segment_ends, end = set(), 0
        for piece in pretokens:
            end += len(piece.removeprefix("##"))
            segment_ends.add(end)
        token_ends, end = set(), 0
        for token in tokenizer.tokenize(word):
            end += len(token.removeprefix("##"))
            token_ends.add(end)
        assert segment_ends <= token_ends, word
        assert end == len(word)


def test_words_that_are_not_flagged_stay_whole(tokenizer: WordmapWordPiece) -> None:
    assert tokenizer.presegment("Haus") == ["Haus"]
    assert tokenizer.presegment("2019") == ["2019"]


def test_decode_rebuilds_the_words_of_corpus_lines(
    tokenizer: WordmapWordPiece, german_lines: list[str]
) -> None:
    lines = german_lines[:200]
    for line, ids in zip(lines, tokenizer.encode_batch(lines), strict=True):
        if tokenizer.unk_id not in ids:
            assert tokenizer.decode(ids) == " ".join(bert_words(line))


@pytest.fixture(scope="module")
def segmented_words(tokenizer: WordmapWordPiece, german_lines: list[str]) -> list[str]:
    words = sorted({word for line in german_lines for word in bert_words(line)})
    chosen = [word for word in words if len(tokenizer.presegment(word)) > 1]
    assert len(chosen) > 100
    return chosen


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_decode_glues_segments_back_without_spaces(
    tokenizer: WordmapWordPiece, segmented_words: list[str], data: st.DataObject
) -> None:
    words = data.draw(st.lists(st.sampled_from(segmented_words), min_size=1, max_size=6))
    text = " ".join(words)
    assert tokenizer.decode(tokenizer.encode(text)) == text


def test_save_load_and_transformers_encode_alike(
    tokenizer: WordmapWordPiece, german_lines: list[str], tmp_path: Path
) -> None:
    tokenizer.save(tmp_path)
    loaded = WordmapWordPiece.load(tmp_path)
    lines = german_lines[:50]
    assert loaded.vocab == tokenizer.vocab
    assert loaded.encode_batch(lines) == tokenizer.encode_batch(lines)
    wrapped = tokenizer.to_transformers()
    restored = pickle.loads(pickle.dumps(wrapped))
    for fast in (wrapped, restored):
        ids = fast(lines[3])["input_ids"]
        assert ids == [
            fast.convert_tokens_to_ids(CLS),
            *tokenizer.encode(lines[3]),
            fast.convert_tokens_to_ids(SEP),
        ]
    with pytest.raises(TokstudyError, match="save_pretrained would drop"):
        wrapped.save_pretrained(tmp_path / "hf")


def test_corpus_without_flagged_words_is_a_clear_error(tmp_path: Path) -> None:
    corpus = tmp_path / "nouns.txt"
    corpus.write_text("Haus Baum Katze\nDer Hund und die Katze\n", encoding="utf-8")
    with pytest.raises(TokstudyError, match=r"nouns\.txt: no word tagged .* lexeme list is empty"):
        WordmapWordPiece.train(corpus, TrainSpec(100, label="de"))


def test_unknown_parameter_is_a_clear_error(german_corpus: Path) -> None:
    with pytest.raises(TokstudyError, match="unknown parameter 'z_treshold'"):
        WordmapWordPiece.train(german_corpus, TrainSpec(SIZE, {"z_treshold": 1.0}))
