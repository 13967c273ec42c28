"""The project's one statistics package: every interval, test and adjustment the model,
NMT and correlation stages report comes from here.

- :mod:`~tokstudy.statistics.bootstrap`: percentile bootstrap intervals
  (``scipy.stats.bootstrap``), the cluster bootstrap (tokenizers with all their cells
  within blocks, then seeds within a cell) and the two-sided bootstrap p of a paired
  difference;
- :mod:`~tokstudy.statistics.permutation`: stratified permutation p-values (permuting only
  within strata; with one stratum, ``scipy.stats.permutation_test``'s p), permutations of
  whole units (tokenizers) within blocks, and the smallest p a design can reach;
- :mod:`~tokstudy.statistics.correlation`: Spearman's ρ and Spearman within strata;
- :mod:`~tokstudy.statistics.significance`: Holm adjustment (``statsmodels``), paired
  Wilcoxon tests (``scipy.stats.wilcoxon``), seed summaries;
- :mod:`~tokstudy.statistics.mixed`: a mixed model with crossed random intercepts
  (``statsmodels`` MixedLM) and a standardized coefficient;
- :mod:`~tokstudy.statistics.units`: the units of inference (tokenizers with their cells
  in stratum order and their blocks) and the relabelling a permutation of them makes.
"""
