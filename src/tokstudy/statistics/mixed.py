"""A random-intercept mixed model (``statsmodels`` MixedLM) with standardized variables."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf
from scipy import stats


@dataclass(frozen=True)
class Coefficient:
    """A standardized fixed-effect coefficient with its Wald interval and p-value."""

    estimate: float
    low: float
    high: float
    pvalue: float
    note: str


COLLINEAR = "design rank-deficient (predictor or covariates collinear): not fitted"


class FittedModel(Protocol):
    """What is read from a fitted model (statsmodels' ``MixedLMResults`` has it)."""

    converged: bool
    params: pd.Series
    bse: pd.Series
    pvalues: pd.Series


def _standardized(values: pd.Series) -> pd.Series:
    return (values - values.mean()) / values.std(ddof=1)


def fit_note(converged: bool, messages: Sequence[str], group: str) -> str:
    """What a reader must know about a fit, from its convergence flag and the warnings its
    fitting raised: no convergence, a zero group variance (the fit is then the
    fixed-effects regression), an unreliable interval; empty for a sound fit."""
    notes = []
    if not converged:
        notes.append("did not converge")
    if any("boundary" in message for message in messages):
        notes.append(f"{group} variance at its boundary (about 0)")
    if any("Hessian" in message for message in messages):
        notes.append("Hessian not positive definite: interval unreliable")
    return "; ".join(notes)


def mixed_coefficient(
    frame: pd.DataFrame,
    outcome: str,
    predictor: str,
    covariates: list[str],
    group: str,
    confidence: float,
) -> Coefficient:
    """Coefficient of ``predictor`` in ``outcome ~ predictor + covariates + (1 | group)``
    with every numeric variable z-scored (``statsmodels.formula.api.mixedlm``, REML), so it
    is in standard deviations of the outcome per standard deviation of the predictor.

    A fit that does not converge, or lands on the variance boundary, says so in ``note``;
    a predictor that the covariates determine exactly (a rank-deficient design, which
    statsmodels cannot fit) is not fitted, and a fit that statsmodels gives up on (a
    singular matrix in its optimisation, which small data can reach on some CPUs) has no
    coefficient; their notes say so.
    """
    numeric = [outcome, predictor, *covariates]
    data = frame[[*numeric, group]].copy()
    names = {column: f"v{index}" for index, column in enumerate(numeric)}
    data = data.rename(columns=names)
    for column in names.values():
        data[column] = _standardized(data[column])
    predictors = [names[c] for c in [predictor, *covariates]]
    design = np.column_stack([np.ones(len(data)), data[predictors].to_numpy(float)])
    if np.linalg.matrix_rank(design) < design.shape[1]:
        return Coefficient(np.nan, np.nan, np.nan, np.nan, COLLINEAR)
    formula = f"{names[outcome]} ~ " + " + ".join(predictors)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fit = smf.mixedlm(formula, data, groups=data[group]).fit(reml=True)
        except np.linalg.LinAlgError as error:
            return Coefficient(np.nan, np.nan, np.nan, np.nan, f"not fitted: {error}")
    messages = [str(w.message) for w in caught]
    return coefficient_of(fit, names[predictor], messages, group, confidence)


def coefficient_of(
    fit: FittedModel, term: str, messages: Sequence[str], group: str, confidence: float
) -> Coefficient:
    """The Wald interval and p-value of ``term`` in ``fit`` with the fit's note
    (:func:`fit_note`); a term without a finite standard error has no interval and no
    p-value, and its note says why."""
    estimate = float(fit.params[term])
    error = float(fit.bse[term])
    z = stats.norm.ppf(0.5 + confidence / 2)
    note = fit_note(fit.converged, messages, group)
    if not np.isfinite(error):
        return Coefficient(estimate, np.nan, np.nan, np.nan, note or "no standard error")
    return Coefficient(
        estimate, estimate - z * error, estimate + z * error, float(fit.pvalues[term]), note
    )
