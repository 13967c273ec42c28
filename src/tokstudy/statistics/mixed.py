"""A mixed model with crossed random intercepts (``statsmodels`` MixedLM variance
components) and standardized variables."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

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
#: a group variance below this (of a z-scored outcome) is at its boundary, about 0
BOUNDARY = 1e-3


class FittedModel(Protocol):
    """What is read from a fitted model (statsmodels' ``MixedLMResults`` has it)."""

    converged: bool
    params: pd.Series
    bse: pd.Series
    pvalues: pd.Series


def _standardized(values: pd.Series) -> pd.Series:
    return (values - values.mean()) / values.std(ddof=1)


def fit_note(converged: bool, messages: Sequence[str], at_boundary: Sequence[str]) -> str:
    """What a reader must know about a fit, from its convergence flag, the groups whose
    fitted variance is about 0 (``at_boundary``: the fit is then the regression without
    them) and the warnings its fitting raised: no convergence, a zero group variance, an
    unreliable interval; empty for a sound fit."""
    notes = []
    if not converged:
        notes.append("did not converge")
    if at_boundary:
        notes.append(f"{' and '.join(at_boundary)} variance at its boundary (about 0)")
    if any("Hessian" in message for message in messages):
        notes.append("Hessian not positive definite: interval unreliable")
    return "; ".join(notes)


def mixed_coefficient(
    frame: pd.DataFrame,
    outcome: str,
    predictor: str,
    covariates: list[str],
    groups: Sequence[str],
    confidence: float,
) -> Coefficient:
    """Coefficient of ``predictor`` in ``outcome ~ predictor + covariates`` with a random
    intercept for each of ``groups``, crossed when there are several (a tokenizer and its
    family, say: statsmodels MixedLM variance components over one all-covering group),
    every numeric variable z-scored, REML; so it is in standard deviations of the outcome
    per standard deviation of the predictor.

    A fit that does not converge, or lands on the variance boundary, says so in ``note``;
    a predictor that the covariates determine exactly (a rank-deficient design, which
    statsmodels cannot fit) is not fitted, and a fit that statsmodels gives up on (a
    singular matrix in its optimisation, which small data can reach on some CPUs) has no
    coefficient; their notes say so.
    """
    numeric = [outcome, predictor, *covariates]
    data = frame[[*numeric, *groups]].copy()
    names = {column: f"v{index}" for index, column in enumerate(numeric)}
    names |= {group: f"g{index}" for index, group in enumerate(groups)}
    data = data.rename(columns=names)
    for column in numeric:
        data[names[column]] = _standardized(data[names[column]])
    predictors = [names[c] for c in [predictor, *covariates]]
    design = np.column_stack([np.ones(len(data)), data[predictors].to_numpy(float)])
    if np.linalg.matrix_rank(design) < design.shape[1]:
        return Coefficient(np.nan, np.nan, np.nan, np.nan, COLLINEAR)
    formula = f"{names[outcome]} ~ " + " + ".join(predictors)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fit, variances = _fit(formula, data, [names[group] for group in groups])
        except (np.linalg.LinAlgError, ValueError) as error:
            return Coefficient(np.nan, np.nan, np.nan, np.nan, f"not fitted: {error}")
    messages = [str(w.message) for w in caught]
    internal = {names[group]: group for group in groups}
    # the variances are of z-scored outcomes: "about 0" is against a total near 1
    at_boundary = [internal[name] for name, value in variances.items() if value < BOUNDARY]
    return coefficient_of(fit, names[predictor], messages, at_boundary, confidence)


def _fit(formula: str, data: pd.DataFrame, groups: list[str]) -> tuple[Any, dict[str, float]]:
    """The REML fit and each group's variance: one group as MixedLM's random intercept,
    several crossed, as variance components of one group covering every row."""
    if len(groups) == 1:
        fit = smf.mixedlm(formula, data, groups=data[groups[0]]).fit(reml=True)
        return fit, {groups[0]: float(np.asarray(fit.cov_re)[0, 0])}
    components = {group: f"0 + C({group})" for group in groups}
    model = smf.mixedlm(
        formula, data.assign(all=1), groups="all", re_formula="0", vc_formula=components
    )
    fit = model.fit(reml=True)
    return fit, dict(zip(fit.model.exog_vc.names, np.atleast_1d(fit.vcomp), strict=True))


def coefficient_of(
    fit: FittedModel,
    term: str,
    messages: Sequence[str],
    at_boundary: Sequence[str],
    confidence: float,
) -> Coefficient:
    """The Wald interval and p-value of ``term`` in ``fit`` with the fit's note
    (:func:`fit_note`); a term without a finite standard error has no interval and no
    p-value, and its note says why."""
    estimate = float(fit.params[term])
    error = float(fit.bse[term])
    z = stats.norm.ppf(0.5 + confidence / 2)
    note = fit_note(fit.converged, messages, at_boundary)
    if not np.isfinite(error):
        return Coefficient(estimate, np.nan, np.nan, np.nan, note or "no standard error")
    return Coefficient(
        estimate, estimate - z * error, estimate + z * error, float(fit.pvalues[term]), note
    )
