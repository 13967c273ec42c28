"""What every model the study trains shares (clm, MLM pretraining, NMT).

``loop``: the one training loop (a task gives its batches, loss and evaluation);
``core``: the optimisation step, the CSV training log with throughput, and early stopping;
``config``: dataclass settings read from the study config (:func:`config.from_mapping`)
and the device keys every training/evaluation section has; ``device``: device choice,
bf16 autocast and the devices' peak FLOP/s; ``flops``: training FLOPs per token, for
FLOP/s and MFU; ``checkpoint``: atomic checkpoints and resuming; ``distributed``: several
processes per model (DDP); ``data_fit``: how much data a run had for its size. Statistics
over runs (seed summaries, bootstrap intervals, Wilcoxon tests) are
:mod:`tokstudy.statistics`'.
"""
