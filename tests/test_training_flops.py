"""The training FLOPs behind every log's ``flops_per_s`` and ``mfu``, against the FLOPs
torch itself counts (``torch.utils.flop_counter.FlopCounterMode``: matrix products and
attention, forward and backward) in each task's real loss on a small model."""

from __future__ import annotations

import pandas as pd
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode
from transformers import BertForMaskedLM, LlamaForCausalLM, MarianConfig

from scripts.gpu_check import Vocabulary
from tokstudy.models.clm.model import llama_config, train_flops_per_token
from tokstudy.models.clm.train import ClmTask
from tokstudy.models.config import ClmConfig, PretrainConfig
from tokstudy.models.pretrain import MlmTask, bert_config, bert_flops_per_token, bert_mlm_loss
from tokstudy.nmt.batching import EncodedPair, SpecialIds, collate
from tokstudy.nmt.config import TrainConfig
from tokstudy.nmt.model import build_model
from tokstudy.nmt.train import NmtTask, nmt_train_flops
from tokstudy.training import loop as loop_module
from tokstudy.training.loop import LoopSettings, TrainingTask, run_peak, train
from tokstudy.training.optimizer import Optimization

SPECIAL = SpecialIds(pad=0, bos=1, eos=2, suppressed=(0, 1))


def counted(task: TrainingTask, model: torch.nn.Module, batch) -> float:
    """FLOPs torch counts in the task's loss and its backward on ``batch`` (attention as
    plain matrix products: the CPU's fused kernel has no FLOP formula)."""
    model.set_attn_implementation("eager")
    with FlopCounterMode(display=False) as counter:
        loss, _ = task.loss(model, task.on_host(batch))
        loss.backward()
    return counter.get_total_flops()


def test_the_clm_count_is_the_flops_torch_counts() -> None:
    config = ClmConfig(preset="tiny", context=24, batch_size=3)
    model = LlamaForCausalLM(llama_config(Vocabulary(300), config))
    task = ClmTask(batches=None, validation=None, config=config, device="cpu")
    inputs = torch.randint(3, 300, (3, 24))
    per_token = train_flops_per_token(model.config, 24)
    assert task.flops((inputs, inputs), 72, per_token) == counted(task, model, (inputs, inputs))


def test_the_bert_count_is_the_flops_torch_counts_at_the_masked_share() -> None:
    """The output layer runs on the masked positions only: 15 % of them here, as the count
    assumes."""
    config = PretrainConfig(preset="tiny", max_length=20, batch_size=2)
    model = BertForMaskedLM(bert_config(Vocabulary(300), config))
    ids = torch.randint(5, 300, (2, 20))
    labels = torch.full_like(ids, -100)
    labels[0, [1, 4, 9]], labels[1, [0, 7, 19]] = ids[0, [1, 4, 9]], ids[1, [0, 7, 19]]
    batch = {"input_ids": ids, "labels": labels}
    task = MlmTask(batches=None, loss_fn=bert_mlm_loss)
    per_token = bert_flops_per_token(model.config, config)
    assert task.flops(batch, 40, per_token) == pytest.approx(counted(task, model, batch))


def _nmt_task(model_config: MarianConfig) -> NmtTask:
    return NmtTask([], SPECIAL, TrainConfig(), model_config, evaluate=None, save=None)


@pytest.mark.parametrize(("source", "target"), [(9, 9), (11, 4), (3, 14)])
def test_the_nmt_count_is_the_flops_torch_counts(source: int, target: int) -> None:
    """Sources and targets of other lengths: the decoder's cross-attention keys and values
    are per source token, its output projection per target token."""
    torch.manual_seed(0)
    model = build_model("tiny", 300, 400, SPECIAL, joint=False, dropout=0.0)
    examples = [
        EncodedPair(row, [*torch.randint(5, 300, (source - 1,)).tolist(), 2], [7] * (target - 1))
        for row in range(3)
    ]
    batch = collate(examples, SPECIAL)
    task = _nmt_task(model.config)
    assert task.flops(batch, 3 * (source + target), 0.0) == counted(task, model, batch)


def test_a_padded_nmt_batch_counts_each_pair_at_its_own_lengths() -> None:
    """Padding and filler rows are not counted: a batch's FLOPs are the sum of its pairs'
    FLOPs alone."""
    torch.manual_seed(0)
    model = build_model("tiny", 300, 400, SPECIAL, joint=False, dropout=0.0)
    task = _nmt_task(model.config)
    examples = [
        EncodedPair(0, [7, 8, 9, 10, 2], [9, 10]),
        EncodedPair(1, [7, 2], [9, 10, 11, 12, 13]),
    ]
    alone = sum(counted(task, model, collate([example], SPECIAL)) for example in examples)
    for multiple, budget in ((1, None), (8, None), (8, 32)):  # 4 rows: 2 of them fillers
        batch = collate(examples, SPECIAL, multiple, budget)
        assert task.flops(batch, 15, 0.0) == alone


def test_the_nmt_count_by_hand() -> None:
    """d = 2, one layer each side, FFN 3, 5 target words; a pair of 4 source and 2 target
    tokens. Source token: encoder 6 · (4 · 4 + 2 · 6) = 168, cross-attention keys and values
    6 · 2 · 4 = 48. Target token: 6 · (6 · 4 + 2 · 6 + 5 · 2) = 276. Attention:
    12 · 2 · (4 · 4 + 2 · (2 + 4)) = 672."""
    config = MarianConfig(
        d_model=2,
        encoder_layers=1,
        decoder_layers=1,
        encoder_ffn_dim=3,
        decoder_ffn_dim=3,
        vocab_size=7,
        decoder_vocab_size=5,
    )
    flops = nmt_train_flops(config, torch.tensor([4]), torch.tensor([2]))
    assert flops == 4 * (168 + 48) + 2 * 276 + 672 == 2088


class _Counted(TrainingTask):
    """y = 3x on batches of 4 rows whose FLOPs the task counts: 100 a step, whatever the
    tokens."""

    def batch(self, step: int):
        x = torch.linspace(-1, 1, 4)[:, None]
        return (x, 3 * x), 4

    def loss(self, model, batch):
        x, y = batch
        loss = torch.nn.functional.mse_loss(model(x), y)
        return loss, {"loss": loss.detach()}

    def flops(self, batch, tokens: int, flops_per_token: float) -> float:
        return 100.0


def test_the_log_takes_a_tasks_own_count(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """25 FLOPs a token (100 a step of 4 tokens), whatever ``flops_per_token`` says; MFU
    against a peak of 1 FLOP/s."""
    monkeypatch.setattr(loop_module, "peak_flops", lambda device, bf16: 1.0)
    model = torch.nn.Linear(1, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    settings = LoopSettings(
        steps=4,
        log_every=2,
        checkpoint_every=4,
        grad_clip=1.0,
        out_dir=tmp_path,
        run_fingerprint="f",
        flops_per_token=7.0,
    )
    optimization = Optimization(optimizer, scheduler)
    result = train(model, optimization, _Counted(), settings, device=torch.device("cpu"))
    log = pd.read_csv(tmp_path / "train_log.csv")
    assert list(log["flops_per_s"]) == pytest.approx(list(25 * log["tokens_per_s"]))
    assert list(log["mfu"]) == pytest.approx(list(log["flops_per_s"]))
    assert result.flops_per_s == pytest.approx(25 * result.tokens_per_s)
    assert result.mfu == pytest.approx(result.flops_per_s)


def test_mfu_divides_by_the_peak_of_every_device_that_shares_the_batch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each step's tokens and FLOPs are counted whole, over all the workers' rows."""
    monkeypatch.setattr(loop_module, "peak_flops", lambda device, bf16: 989e12)
    assert run_peak(torch.device("cuda"), True, 1) == 989e12
    assert run_peak(torch.device("cuda"), True, 4) == 4 * 989e12
    monkeypatch.setattr(loop_module, "peak_flops", lambda device, bf16: None)
    assert run_peak(torch.device("cpu"), True, 4) is None  # no peak on the CPU: no MFU
