"""The Plotly figures of Compare, Semantic and Evaluate (built here, drawn by the pages)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import plotly.graph_objects as go

#: Chart colours per configuration (Okabe–Ito, as the text highlights).
CHART_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00")
MARGIN = {"t": 30, "b": 10, "l": 10, "r": 10}
LIMIT_LINE = {"line_dash": "dash", "line_color": "#c1121f"}


def color(i: int) -> str:
    return CHART_COLORS[i % len(CHART_COLORS)]


# -- Compare ----------------------------------------------------------------------------------
def size_figures(
    series: Sequence[tuple[str, str, list]], unit: str, limit: int
) -> tuple[go.Figure, go.Figure]:
    """A histogram and violins of chunk sizes, one ``(label, colour, sizes)`` per configuration;
    in tokens, the model's limit as a red line."""
    hist, box = go.Figure(), go.Figure()
    everything = [v for _, _, values in series for v in values]
    low, high = (min(everything), max(everything)) if everything else (0, 1)
    width = max(1, math.ceil((high - low + 1) / 40))  # the same 40 bins for every configuration:
    bins = {"start": low - 0.5, "end": high + width, "size": width}  # Plotly binned each its own way
    for label, colour, values in series:
        hist.add_trace(go.Histogram(x=values, name=label, marker_color=colour, opacity=0.6, xbins=bins))
        box.add_trace(
            go.Violin(
                y=values,
                name=label,
                line_color=colour,
                box_visible=True,
                meanline_visible=True,
                points="outliers" if len(values) > 200 else "all",
                jitter=0.3,
                spanmode="hard",  # the density stops at the smallest and largest chunk: never below 0
            )
        )
    x_title = "chunk size (characters)" if unit == "characters" else "chunk size (model tokens)"
    hist.update_layout(
        barmode="overlay",
        xaxis_title=x_title,
        yaxis_title="chunks",
        legend={"orientation": "h", "y": -0.25},
        margin=MARGIN,
        height=420,
    )
    box.update_layout(
        yaxis={"title": x_title, "rangemode": "tozero"}, showlegend=False, margin=MARGIN, height=420
    )
    if unit == "tokens":
        hist.add_vline(x=limit, annotation_text=f"model limit {limit}", **LIMIT_LINE)
        box.add_hline(y=limit, annotation_text=f"model limit {limit}", **LIMIT_LINE)
    return hist, box


def metric_bars(
    names: Sequence[str], values: Sequence[Any], colours: Sequence[str], metric: str
) -> go.Figure:
    """One bar per configuration, labelled with its value (none for a missing one)."""
    fig = go.Figure(
        go.Bar(
            x=list(names),
            y=list(values),
            marker_color=list(colours),
            text=[
                ("" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:g}") for v in values
            ],
            textposition="outside",
        )
    )
    fig.update_layout(yaxis_title=metric, margin=MARGIN, height=360)
    return fig


# -- Evaluate ---------------------------------------------------------------------------------
def score_bars(
    results: Sequence[Any], metric: str, title: str, names: Sequence[str] | None = None
) -> go.Figure:
    """Mean ± standard deviation of one score, in %, one bar per configuration (``names``, else
    each result's own). The error bar stays within [0, 100] %, and each value is written above
    its bar's error bar, where the bar cannot hide it."""
    fig = go.Figure()
    for i, r in enumerate(results):
        stat = getattr(r.scores, metric)
        mean, std = 100 * stat.mean, 100 * stat.std
        up, down = min(std, 100 - mean), min(std, mean)  # a score is a fraction: [0, 100] %
        name = names[i] if names is not None else r.name
        fig.add_trace(
            go.Bar(
                x=[name],
                y=[mean],
                error_y={
                    "type": "data",
                    "array": [up],
                    "arrayminus": [down],
                    "visible": True,
                    "thickness": 1.2,
                },
                marker_color=color(i),
                name=name,
                hovertemplate=f"{mean:.1f} % ± {std:.1f}<extra></extra>",
            )
        )
        fig.add_annotation(
            x=name,
            y=mean + up,
            text=f"<b>{mean:.1f}</b> ± {std:.1f}",
            showarrow=False,
            yshift=11,
            font={"size": 13, "color": "#1f2328"},
        )
    fig.update_layout(
        yaxis={"title": f"{title} (%)", "range": [0, 112], "tickvals": list(range(0, 101, 20))},
        showlegend=False,
        height=380,
        margin=MARGIN,
    )
    return fig


_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "star")
_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")


#: A length unit as a sweep's axis names it.
UNIT_WORDS = {"chars": "characters", "tokens": "model tokens", "cl100k": "cl100k tokens", "o200k": "o200k tokens"}


def line_units(lines: dict[str, list], param: str) -> dict[str, str]:
    """Each line's length unit (label → words) where ``param`` is a size or an overlap, counted in
    it: a sweep's axis said "chunk_size" over lines in characters and in tokens alike."""
    from explorer.strategies import get_strategy
    from explorer.strategies.adapt import unit_of

    units = {}
    for label, rows in lines.items():
        config = next((r.result.config for r in rows if r.result is not None), None)
        strategy = get_strategy(config.strategy) if config is not None else None
        if strategy is not None and param in strategy.param_names() and strategy.param(param).measured:
            unit = unit_of(strategy, config.param_dict)
            units[label] = UNIT_WORDS.get(unit, unit)
    return units


def sweep_lines(
    lines: dict[str, list], param: str, metric: str, title: str, units: dict[str, str] | None = None
) -> go.Figure:
    """One line per configuration: the mean score (in %) at each value of the swept parameter.
    Lines that score alike lie on each other, so each has its own marker and dash, and the first
    the widest: the ones below still show around the ones drawn over them. ``units`` (label →
    unit, :func:`line_units`) names the axis's unit, and each line's where they differ."""
    fig = go.Figure()
    n = len(lines)
    units = units or {}
    kinds = sorted(set(units.values()))
    mixed = len(kinds) > 1
    ys: list[float] = []
    for i, (label, rows) in enumerate(lines.items()):
        ok = [r for r in rows if r.result is not None]
        ys += [100 * getattr(r.result.scores, metric).mean for r in ok]
        fig.add_trace(
            go.Scatter(
                x=[r.value for r in ok],
                y=[100 * getattr(r.result.scores, metric).mean for r in ok],
                mode="lines+markers",
                name=f"{label} ({units[label]})" if mixed and label in units else label,
                line={"color": color(i), "width": 2 + 2 * (n - 1 - i), "dash": _DASHES[i % len(_DASHES)]},
                marker={"symbol": _SYMBOLS[i % len(_SYMBOLS)], "size": 8 + 4 * (n - 1 - i)},
            )
        )
    shown = f" ({kinds[0]})" if len(kinds) == 1 else f" (each line in its own unit: {', '.join(kinds)})" if mixed else ""
    fig.update_layout(
        xaxis_title=param + shown,
        yaxis_title=f"{title} (%)",
        height=360,
        margin=MARGIN,
        legend={"orientation": "h", "y": -0.3},
        showlegend=True,  # a single line (the others stopped) still says which configuration it is
        yaxis_range=score_range(ys),
    )
    return fig


#: Points of a percentage a sweep's y axis spans at least.
MIN_SCORE_SPAN = 10.0


def score_range(ys: Sequence[float]) -> list[float] | None:
    """A y range in % for ``ys`` that spans at least :data:`MIN_SCORE_SPAN` points inside 0–100
    (a margin around): a fitted axis drew 99.88 against 100 across the whole chart."""
    if not ys:
        return None
    lo, hi = min(ys), max(ys)
    pad = max(0.0, (MIN_SCORE_SPAN - (hi - lo)) / 2)
    lo, hi = lo - pad, hi + pad
    if lo < 0:
        lo, hi = 0.0, hi - lo
    if hi > 100:
        lo, hi = lo - (hi - 100), 100.0
    return [max(lo, 0.0) - 2, hi + 2]


# -- Semantic ---------------------------------------------------------------------------------
def curve_figures(
    curve: Any,
    y_name: str,
    sentence: Callable[[tuple[int, int]], str],
    selected: tuple[int, int, str] | None = None,
    cap_cuts: Sequence[int] = (),
) -> tuple[go.Figure, go.Figure]:
    """The distance curve between neighbouring sentences with its breakpoints and threshold, and
    the histogram of its values; ``sentence(span)`` is the (escaped) text a point's hover shows;
    ``selected`` (start, end, name) is shaded (the chunk shown under the curve); ``cap_cuts``
    are the cuts the size cap made, marked along the bottom (else the chunks outnumber the
    breakpoints with nothing on the chart to say why)."""
    points, thr = curve.points, curve.threshold
    hover = [
        [i, sentence(p.left), sentence(p.right), p.similarity, "boundary" if p.is_break else "no boundary"]
        for i, p in enumerate(points)
    ]
    scatter = go.Scattergl if len(points) > 3000 else go.Scatter
    fig = go.Figure()
    fig.add_trace(
        scatter(
            x=[p.position for p in points],
            y=[p.score for p in points],
            mode="lines+markers",  # markers: a click selects a gap (a line alone is not selectable)
            line={"color": "#0072B2", "width": 1.4},
            marker={"size": 4, "color": "#0072B2"},
            selected={"marker": {"size": 9, "color": "#0072B2"}},
            unselected={"marker": {"opacity": 1}},
            name=y_name,
            customdata=hover,
            hovertemplate="gap %{customdata[0]} · "
            + y_name
            + " %{y:.3f} · similarity %{customdata[3]:.3f}<br><b>%{customdata[4]}</b><br>"
            "… %{customdata[1]}<br>▸ %{customdata[2]}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[p.position for p in points if p.is_break],
            y=[p.score for p in points if p.is_break],
            mode="markers",
            marker={"color": "#D55E00", "size": 8, "symbol": "diamond"},
            name="breakpoint",
            hoverinfo="skip",
        )
    )
    if cap_cuts:
        _mark_cap_cuts(fig, cap_cuts, min(p.score for p in points))
    _curve_extras(fig, curve, y_name, selected)
    hist = go.Figure(go.Histogram(x=[p.score for p in points], nbinsx=40, marker_color="#56B4E9"))
    if not math.isnan(thr):
        hist.add_vline(x=thr, **LIMIT_LINE)
    hist.update_layout(xaxis_title=y_name, yaxis_title="gaps", height=380, margin=MARGIN)
    return fig, hist


def _mark_cap_cuts(fig: go.Figure, cuts: Sequence[int], y: float) -> None:
    """The size cap's cuts along the bottom of the curve, apart from the breakpoints."""
    fig.add_trace(
        go.Scatter(
            x=list(cuts),
            y=[y] * len(cuts),
            mode="markers",
            marker={"color": "#CC79A7", "size": 11, "symbol": "triangle-up"},
            name=f"cut by max_chunk_size ({len(cuts):,})",
            hovertemplate="cut by max_chunk_size at character %{x:,}<extra></extra>",
        )
    )


def _curve_extras(fig: go.Figure, curve: Any, y_name: str, selected: tuple[int, int, str] | None) -> None:
    """The threshold as a legend entry (a label on the line would cover the curve), the selected
    chunk shaded, and the legend under the chart, where neither toolbar (top right) covers it."""
    xs = [p.position for p in curve.points]
    if not math.isnan(curve.threshold) and xs:
        fig.add_trace(
            go.Scatter(
                x=[min(xs), max(xs)],
                y=[curve.threshold, curve.threshold],
                mode="lines",
                line={"color": LIMIT_LINE["line_color"], "dash": "dash", "width": 1.5},
                name=f"threshold {curve.threshold:.3f}",
                hoverinfo="skip",
            )
        )
    if selected is not None:
        start, end, name = selected
        fig.add_vrect(x0=start, x1=end, fillcolor="rgba(0,114,178,0.13)", line_width=0, layer="below")
        fig.add_trace(  # its legend entry
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                marker={"symbol": "square", "size": 12, "color": "rgba(0,114,178,0.25)"},
                name=f"{name} (shown below)",
            )
        )
    fig.update_layout(
        xaxis_title="position in the document (characters)",
        yaxis_title=y_name,
        height=380,
        margin={**MARGIN, "t": 20},
        legend={"orientation": "h", "yanchor": "top", "y": -0.2, "x": 0, "xanchor": "left"},
        hovermode="x",  # the gap nearest the pointer's position: a click anywhere above it picks it
        hoverlabel={"align": "left"},
    )
