#!/usr/bin/env bash
# Mutation testing (mutmut) of the modules whose numbers the study publishes: metrics,
# word and fertility counting, parity, the cost table, statistics, training FLOPs and the
# downstream scores (classification, bits per byte, MLM pseudo-likelihood, BLEU and chrF).
# Configured in pyproject.toml
# ([tool.mutmut]: the modules and the covering fast test files); results in docs/mutation.md.
# Slow (about 30 min for the downstream scores' mutants alone on 2 cores): run it by hand,
# not in CI, with the project's
# virtual environment active (mutmut is in the `test` extra).
#
#   scripts/mutation.sh            # run every mutant, then print the per-module summary
#   scripts/mutation.sh --summary  # the summary of the last run only
#   scripts/mutation.sh 'tokstudy.statistics*'  # only the mutants these names match, run
#                                               # again (each against the tests that cover it)
#
# Work folder: mutants/ (ignored by git; delete it to start afresh). Inspect a survivor
# with `mutmut show NAME`; `mutmut results` lists them.
set -euo pipefail
cd "$(dirname "$0")/.."
# mutmut copies src/ into mutants/ and imports it from there: an outer PYTHONPATH pointing
# at src/ would make the tests import the unmutated code
unset PYTHONPATH
# mutmut runs the tests from mutants/, where the tests' default ../shared does not exist:
# point them at the repository's ../shared, and fail rather than skip the tests that need it
# (a skipped test kills no mutant)
export TOKSTUDY_SHARED="${TOKSTUDY_SHARED:-$(cd .. && pwd)/shared}"
export TOKSTUDY_REQUIRE_SHARED=1
# one thread per mutant: mutmut forks its children from a process whose tests ran torch,
# and a child that runs torch's thread pool again after the fork hangs (a timeout, not a
# verdict)
if [[ "${1:-}" != "--summary" ]]; then
    OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 nice -n 5 \
        python -m mutmut run --max-children "${MUTMUT_CHILDREN:-1}" "$@"
fi
python scripts/mutation_summary.py
