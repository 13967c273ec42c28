"""A random-intercept mixed model (``statsmodels`` MixedLM) with standardized variables."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

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


def _standardized(values: pd.Series) -> pd.Series:
    return (values - values.mean()) / values.std(ddof=1)


def _fit_note(fit, messages: list[str], group: str) -> str:
    """What a reader must know about a fit: no convergence, a zero group variance
    (the fit is then the fixed-effects regression), an unreliable interval."""
    notes = []
    if not fit.converged:
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

    A fit that does not converge, or lands on the variance boundary, says so in ``note``.
    """
    numeric = [outcome, predictor, *covariates]
    data = frame[[*numeric, group]].copy()
    names = {column: f"v{index}" for index, column in enumerate(numeric)}
    data = data.rename(columns=names)
    for column in names.values():
        data[column] = _standardized(data[column])
    formula = f"{names[outcome]} ~ " + " + ".join(names[c] for c in [predictor, *covariates])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = smf.mixedlm(formula, data, groups=data[group]).fit(reml=True)
    term = names[predictor]
    estimate = float(fit.params[term])
    error = float(fit.bse[term])
    z = stats.norm.ppf(0.5 + confidence / 2)
    note = _fit_note(fit, [str(w.message) for w in caught], group)
    if not np.isfinite(error):
        return Coefficient(estimate, np.nan, np.nan, np.nan, note or "no standard error")
    return Coefficient(
        estimate, estimate - z * error, estimate + z * error, float(fit.pvalues[term]), note
    )
