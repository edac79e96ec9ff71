"""The Xenos board fit's convergence check (:func:`validation.xenos.fit.fit`): a stop at the
iteration cap is an error, not a fitted value. The board objective (seven models simulated
per evaluation) is replaced by cheap ones of the same variables (logits of the fractions)."""

from __future__ import annotations

import math

import pytest

from validation.xenos import fit, refs


def _logit(v: float) -> float:
    return math.log(v / (1 - v))


def test_a_converged_fit_returns_the_minimum(monkeypatch):
    target = (_logit(0.62), _logit(0.78))
    monkeypatch.setattr(fit, "objective", lambda x, soc: sum((a - b) ** 2
                                                             for a, b in zip(x, target)))
    mac, dram = fit.fit((0.6, 0.77), refs.SOC)
    assert (mac, dram) == pytest.approx((0.62, 0.78), abs=2e-3)


def test_a_fit_stopped_by_the_iteration_cap_is_an_error(monkeypatch):
    # Rosenbrock's valley from far away: 30 Nelder-Mead iterations do not reach its floor
    monkeypatch.setattr(fit, "objective", lambda x, soc: (1 - x[0]) ** 2
                        + 100 * (x[1] - x[0] ** 2) ** 2)
    with pytest.raises(fit.NotConverged, match="did not converge: Maximum number of "
                       "iterations"):
        fit.fit((0.01, 0.99), refs.SOC)
    with pytest.raises(SystemExit, match="error: the tms320c6678 fit did not converge"):
        fit.main(["--fit"])
