"""The workflow wing: everything that knows about the study config and Snakemake.

It imports the library (:mod:`tokstudy.tokenizers`, :mod:`tokstudy.metrics`,
:mod:`tokstudy.models`, :mod:`tokstudy.nmt`, :mod:`tokstudy.analyses`, :mod:`tokstudy.report`,
:mod:`tokstudy.corpora`, :mod:`tokstudy.statistics`, ...); no library module imports it
(``tests/test_imports.py``). It holds the study (:mod:`.study`: the config resolved
once and the plan of its sections), one package per stage mirroring the library's, each
with its planner (``plan.py``: the files of ``workflow/rules/<stage>.smk``, whose rules name
the library functions they run), the analyses' planners (:mod:`.analyses`), and the
workflow's support: the dispatcher and the binder (:mod:`.dispatch`, :mod:`.binder`,
:mod:`.snakemake_job`), code fingerprints (:mod:`.code_fingerprint`), the results folder
(:mod:`.results_dir`, :mod:`.study_lock`), the config files (:mod:`.config_files`), the cell
jobs (:mod:`.cell_job`, :mod:`.cell_priority`) and the scheduler patch
(:mod:`.scheduler_wakeups`).
"""
