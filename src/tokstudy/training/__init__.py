"""What the MLM and NMT stages share: typed settings, devices, checkpoints and the loop core.

``config``: dataclass settings read from the study config (:func:`config.from_mapping`)
and the device keys every training/evaluation section has; ``device``: device choice and
bf16 autocast; ``checkpoint``: atomic checkpoints and resuming; ``core``: the optimisation
step, the CSV training log with throughput, and early stopping. Statistics over runs (seed
summaries, bootstrap intervals, Wilcoxon tests) are :mod:`tokstudy.statistics`'.
"""
