"""Plots of counterpoint results (matplotlib; works headless with the Agg backend).

score_histograms compares score distributions (e.g. sparsity of relevant vs. other candidates);
alpha_curve draws the objective against alpha from tune_alpha().
"""

import math


def _pyplot():
    import matplotlib
    if _no_display():
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _no_display():
    import os
    return not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY")


def score_histograms(scores, bins=40, ax=None, title=None, density=True):
    """Overlaid histograms of named score arrays.

    Arguments:
        scores: dict name -> 1-D sequence of finite numbers (at least one name, none empty).
        bins: histogram bins shared by all series (>= 1).
        ax: a matplotlib Axes to draw on; a new figure when None.
        title: optional title.
        density: normalise each histogram to unit area, so series of different sizes compare.

    Returns:
        The matplotlib Figure.
    """
    import numpy as np
    if not isinstance(scores, dict) or not scores:
        raise ValueError("scores must be a non-empty dict name -> scores")
    if int(bins) < 1:
        raise ValueError(f"bins must be >= 1, got {bins}")
    arrays = {}
    for name, values in scores.items():
        array = np.asarray(values, dtype=np.float64).ravel()
        if array.size == 0:
            raise ValueError(f"scores[{name!r}] is empty")
        if not np.all(np.isfinite(array)):
            raise ValueError(f"scores[{name!r}] holds NaN or infinite values")
        arrays[str(name)] = array
    low = min(a.min() for a in arrays.values())
    high = max(a.max() for a in arrays.values())
    if high <= low:
        high = low + 1.0
    edges = np.linspace(low, high, int(bins) + 1)
    plt = _pyplot()
    if ax is None:
        figure, ax = plt.subplots(figsize=(6, 4))
    else:
        figure = ax.figure
    for name, array in arrays.items():
        ax.hist(array, bins=edges, alpha=0.5, density=density, label=f"{name} (n={array.size})")
    ax.set_xlabel("score")
    ax.set_ylabel("density" if density else "count")
    ax.legend()
    if title:
        ax.set_title(title)
    return figure


def alpha_curve(result, ax=None, title=None, metric="objective"):
    """The objective against alpha from tune_alpha(), with the chosen alpha marked.

    Arguments:
        result: the dict returned by tune_alpha (best_alpha, best_score, curve).
        ax: a matplotlib Axes to draw on; a new figure when None.
        title: optional title.
        metric: y-axis label, e.g. "nDCG@10".

    Returns:
        The matplotlib Figure.
    """
    try:
        curve = sorted((float(a), float(s)) for a, s in result["curve"])
        best_alpha = float(result["best_alpha"])
        best_score = float(result["best_score"])
    except (KeyError, TypeError) as error:
        raise ValueError("result must be the dict returned by tune_alpha "
                         "(best_alpha, best_score, curve)") from error
    if not curve:
        raise ValueError("result['curve'] is empty")
    if not all(math.isfinite(v) for point in curve for v in point):
        raise ValueError("result['curve'] holds NaN or infinite values")
    plt = _pyplot()
    if ax is None:
        figure, ax = plt.subplots(figsize=(6, 4))
    else:
        figure = ax.figure
    ax.plot([a for a, _ in curve], [s for _, s in curve], marker=".", linestyle="-")
    ax.axvline(best_alpha, color="gray", linestyle="--")
    ax.plot([best_alpha], [best_score], marker="*", markersize=12, color="red",
            label=f"best alpha = {best_alpha:.4g} ({best_score:.4f})")
    ax.set_xlabel("alpha")
    ax.set_ylabel(metric)
    ax.legend()
    if title:
        ax.set_title(title)
    return figure
