"""The report page: one static, self-contained HTML file for a run folder.

Python renders every section as HTML (so the page reads without JavaScript and tests can
look inside it); the template ``report.html`` holds the stylesheet and a small script that
pages through the records. Charts are inline SVG (``spanaug_report.svg``), nothing is
loaded from the network and no font is fetched, so the file can be mailed or opened from
disk. Sections: the run (manifest: status, counts, components, config), score histograms,
the filter table (and Table 4 against human judgments), diversity (Table 3, Figs. 4-5)
and the records, source and paraphrase side by side with their spans highlighted by role.
"""

from __future__ import annotations

import html
import itertools
import json
import math
from collections.abc import Callable, Iterable, Sequence
from importlib.resources import files
from typing import Any

from spanaug_core.text import detokenize, token_offsets
from spanaug_core.types import Augmented, Span
from spanaug_shared.judgments import Judgment
from spanaug_shared.postag import TaggerChoice, find_tagger
from spanaug_report.pos import pos_diversity
from spanaug_report.rundir import Run
from spanaug_report.stats import filter_rows, histogram, integer_bins, rule_scores, seed_size, span_pairs
from spanaug_report.svg import bar_chart

esc = html.escape
ROLE_CLASSES = ("target", "argument", "entity")
# When spans overlap, the segment takes the colour of the first role here (then the shortest span).
ROLE_ORDER = {role: k for k, role in enumerate(ROLE_CLASSES)}
SHOWN_AVOID = 10
# Culkin et al. 2021, Table 3, row "Source vs. Model": a reference for the run's own row.
PAPER_TABLE3 = (31.08, 28.94, 29.31)


def _role_class(role: str) -> str:
    return f"r-{role}" if role in ROLE_CLASSES else "r-other"


def _pct(share: float) -> str:
    return "–" if math.isnan(share) else f"{share * 100:.1f}%"


def _note(text: str) -> str:
    return f'<p class="note">{esc(text)}</p>'


def highlighted(tokens: Sequence[str], spans: Iterable[Span]) -> str:
    """The detokenized sentence as HTML, each span in a ``<mark>`` coloured by role and tagged with its label.

    Spans may nest or overlap: the sentence is cut at every span boundary and each piece is
    marked by the spans that cover it; a span's label follows its last piece.
    """
    spans = list(spans)
    text, offsets = detokenize(tokens), token_offsets(tokens)
    starts, ends = [a for a, _ in offsets], [b for _, b in offsets]
    cuts = sorted({0, len(tokens), *(s.start for s in spans), *(s.end for s in spans)})
    out, pos = [], 0
    for a, b in itertools.pairwise(cuts):
        covering = [s for s in spans if s.start <= a and b <= s.end]
        piece = esc(text[starts[a] : ends[b - 1]])
        out.append(esc(text[pos : starts[a]]))
        pos = ends[b - 1]
        if not covering:
            out.append(piece)
            continue
        main = min(covering, key=lambda s: (ROLE_ORDER.get(s.role, len(ROLE_ORDER)), s.end - s.start))
        title = "; ".join(f"{s.label} ({s.role}{', ' + s.group if s.group else ''})" for s in covering)
        labels = "".join(f'<span class="lab">{esc(s.label)}</span>' for s in covering if s.end == b)
        out.append(f'<mark class="{_role_class(main.role)}" title="{esc(title)}">{piece}{labels}</mark>')
    out.append(esc(text[pos:]))
    return "".join(out)


def _table(head: Sequence[str], rows: Iterable[Sequence[str]], numeric: Sequence[bool], row_class: Callable[[int], str] | None = None) -> str:
    """An HTML table; cells are HTML already, ``numeric`` right-aligns columns."""
    align = [' class="num"' if n else "" for n in numeric]
    out = ["<table><thead><tr>", *(f"<th{a}>{h}</th>" for h, a in zip(head, align)), "</tr></thead><tbody>"]
    for k, row in enumerate(rows):
        cls = f' class="{row_class(k)}"' if row_class and row_class(k) else ""
        out.append(f"<tr{cls}>" + "".join(f"<td{a}>{c}</td>" for c, a in zip(row, align)) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{esc(caption)}</figcaption></figure>"


# -- the run ----------------------------------------------------------------------------------
def _component(spec: Any) -> str:
    if not isinstance(spec, dict):
        return esc(str(spec))
    options = ", ".join(f"{k}={v}" for k, v in spec.items() if k != "name")
    return f"<code>{esc(str(spec.get('name', '?')))}</code>" + (f" <span class='muted'>{esc(options)}</span>" if options else "")


def _lexicon(manifest: dict[str, Any], config: dict[str, Any]) -> str:
    """The run's lexicon with every option it ran with (the manifest's resolved ones: the release it read...)."""
    spec = config.get("lexicon")
    if not isinstance(spec, dict):
        return "none"
    resolved = (manifest.get("options") or {}).get("lexicon")
    return _component({"name": spec.get("name"), **(resolved if isinstance(resolved, dict) else spec)})


def _run_section(run: Run) -> str:
    m, config = run.manifest, run.config
    status = str(m.get("status", "unknown"))
    meta = [f'<span class="status status-{esc(status)}">{esc(status)}</span>']
    for key, label in (("created", "created"), ("spanaug_version", "spanaug")):
        if m.get(key):
            meta.append(f"{label} {esc(str(m[key]))}")
    timings = m.get("timings") or {}
    if timings.get("updated"):
        meta.append(f"updated {esc(str(timings['updated']))} ({timings.get('elapsed_s') or 0:.0f} s)")
    counts = run.counts
    shown = {
        "examples": counts.get("examples"), "spans": counts.get("jobs"),
        "accepted": len(run.records), "rejected by filters": len(run.filtered),
        "stopped early": sum((counts.get("stopped") or {}).values()) if counts else None,
        "decode s": counts.get("decode_s"), "align s": counts.get("align_s"),
    }
    cells = "".join(f"<div><dt>{esc(k)}</dt><dd>{esc(str(v))}</dd></div>" for k, v in shown.items() if v is not None)
    parts = [f'<p class="meta">{" · ".join(meta)}</p>', f'<dl class="counts">{cells}</dl>']
    if config:
        rows = [(esc(kind), _component(config.get(kind))) for kind in ("dataset", "decoder", "aligner", "expander") if kind in config]
        rows.append(("input", esc(str(config.get("input") or "(the dataset's default)"))))
        repairs = m.get("reader_warnings") or {}
        if repairs:
            rows.append(("the reader repaired or skipped", esc(", ".join(f"{n:,} {what}" for what, n in repairs.items()))))
        rows.append(("lexicon", _lexicon(m, config)))
        rows.append(("filters", ", ".join(_component(f) for f in config.get("filters", [])) or "none"))
        # A run made before per_round kept one record a round.
        rows.append(("iterations · top-m · per round · chain",
                     esc(f"{config.get('iterations')} · {config.get('top_m')} · {config.get('per_round', 1)} · {config.get('chain')}")))
        parts.append(_table(("setting", "value"), rows, (False, False)))
        parts.append(f"<details><summary>full manifest</summary><pre>{esc(json.dumps(m, indent=2, ensure_ascii=False))}</pre></details>")
    return "".join(parts)


# -- scores -----------------------------------------------------------------------------------
def _scores_section(run: Run) -> str:
    if not run.records and not run.filtered:
        return _note("no records: nothing to plot")
    groups = {"accepted": run.records}
    if run.filtered:
        groups["rejected by a filter"] = run.filtered
    figures = []
    for key, what in (("paraphrase", "decoder's length-normalised log-probability"), ("alignment", "aligner's score of the chosen span")):
        labels, counts = histogram({name: [r.scores[key] for r in rs if key in r.scores] for name, rs in groups.items()})
        if labels:
            figures.append(_figure(bar_chart(f"{key} score", labels, counts, f"{key} score (bin start)", "records"),
                                   f"The {what}; bars start at the value shown."))
    labels, counts = integer_bins({name: [r.iteration for r in rs] for name, rs in groups.items()}, first=1)
    figures.append(_figure(bar_chart("iteration", labels, counts, "iteration", "records"),
                           "The round of paraphrase + align that made each record."))
    return f'<div class="charts">{"".join(figures)}</div>'


# -- filters ----------------------------------------------------------------------------------
def _filters_section(run: Run, judgments: Sequence[Judgment] | None) -> str:
    rows = filter_rows(run)
    records = len(run.records) + len(run.filtered)
    kinds = {"accepted": "kept", "filter": "dropped by filter", "stop": "span stopped"}
    body = [(esc(kinds[r.kind]), f"<code>{esc(r.name)}</code>", str(r.count),
             _pct(r.count / records) if r.kind != "stop" and records else "", esc(r.example)) for r in rows]
    parts = [_table(("outcome", "filter / reason", "count", "share of records", "e.g."), body, (False, False, True, True, False)),
             ('<p class="muted">A record goes to rejected.jsonl with the first filter that drops it. Stopped spans end '
              "their iterations early (no record); see docs/concepts.md for the reasons.</p>")]
    parts.append("<h3>Filters against human judgments (Table 4)</h3>")
    if judgments is None:
        parts.append(_note("pass --judgments FILE (from `spanaug judge import`) for the precision and recall of filtering rules"))
        return "".join(parts)
    known = {r.id for r in run.records} | {r.id for r in run.filtered}
    foreign = sum(j.id not in known for j in judgments)
    good = sum(j.accepted for j in judgments)
    seed = seed_size(run)
    parts.append(f"<p>{len(judgments)} judged outputs, {good} accepted ({_pct(good / len(judgments))}); the multiple is "
                 f"(seed + records of augmented.jsonl the rule keeps) / seed, with a seed of {seed} examples.</p>")
    if foreign:
        parts.append(_note(f"{foreign} judgments name records that are not in this run; they still count for precision and recall"))
    scores = rule_scores(run, judgments)
    body = [(esc(s.name), f"<code>{esc(s.spec)}</code>", str(s.kept), _pct(s.precision), _pct(s.recall),
             "–" if math.isnan(s.multiple) else f"{s.multiple:.2f}x") for s in scores]
    parts.append(_table(("rule", "as run filters (--set filters=…)", "kept judged", "precision", "recall", "multiple"), body,
                        (False, False, True, True, True, True)))
    parts.append('<p class="muted">The paper\'s paraphrase score is a cost; here it is a log-probability, so its '
                 "“score ≤ 0.6” reads “paraphrase ≥ -0.6”.</p>")
    return "".join(parts)


# -- diversity --------------------------------------------------------------------------------
def _diversity_section(run: Run, tagger: Callable[[], TaggerChoice]) -> str:
    pairs = span_pairs(run.records, run.sources, run.rewrite_roles)
    if not pairs:
        why = "no source sentences at hand" if not run.sources else "no record rewrote a span"
        return _note(f"diversity needs pairs of a source span and its aligned span: {why}")
    parts = ["<h3>Part of speech of source and aligned spans (Table 3)</h3>"]
    choice = tagger()
    if choice.tagger is None:
        parts.append(_note(choice.description))
    else:
        d = pos_diversity(pairs, choice.tagger)
        rows = [("source vs. aligned (this run)", str(d.pairs), _pct(d.not_exact), _pct(d.jaccard), _pct(d.weighted_jaccard)),
                ("source vs. model (paper)", "", *(f"{v:.1f}%" for v in PAPER_TABLE3))]
        parts.append(_table(("comparison", "pairs", "¬EXT", "JCD", "WJCD"), rows, (False, True, True, True, True),
                            lambda k: "reference" if k == 1 else ""))
        parts.append(f'<p class="muted">¬EXT: tag sequences differ; JCD: Jaccard distance of tag sets; WJCD: weighted '
                     f"Jaccard distance of tag counts. Tagger: {esc(choice.description)}.</p>")
        if d.changes:
            parts.append(_table(("source tags", "aligned tags", "pairs"),
                                ((f"<code>{esc(a)}</code>", f"<code>{esc(b)}</code>", str(n)) for (a, b), n in d.changes),
                                (False, False, True)))
    lengths = {"source span": [p.source[1] - p.source[0] for p in pairs], "aligned span": [p.aligned[1] - p.aligned[0] for p in pairs]}
    labels, counts = integer_bins(lengths, first=1, cap=5)
    summary = "; ".join(f"{name}: mean {sum(v) / len(v):.2f} tokens, {_pct(sum(x > 1 for x in v) / len(v))} multi-word"
                        for name, v in lengths.items())
    shifts = [p.shift for p in pairs]
    shift_labels, shift_counts = integer_bins({"pairs": shifts}, width=5, cap=30)
    near = sum(s < 15 for s in shifts) / len(shifts)
    parts.append('<div class="charts">'
                 + _figure(bar_chart("span length (Fig. 4)", labels, counts, "tokens", "spans"), summary + ".")
                 + _figure(bar_chart("position shift (Fig. 5)", shift_labels, shift_counts, "|a1 - b1| + |a2 - b2| (bin)", "pairs"),
                           f"Token distance between source span a and aligned span b; mean {sum(shifts) / len(shifts):.1f}, "
                           f"{_pct(near)} below 15 (the paper: 97.5%).")
                 + "</div>")
    return "".join(parts)


# -- records ----------------------------------------------------------------------------------
def _chips(phrases: Sequence[str], kind: str) -> str:
    chips = [f'<span class="chip {kind}">{esc(p)}</span>' for p in phrases]
    if len(chips) <= SHOWN_AVOID:
        return "".join(chips)
    return "".join(chips[:SHOWN_AVOID]) + f"<details><summary>+{len(chips) - SHOWN_AVOID} more</summary>{''.join(chips[SHOWN_AVOID:])}</details>"


def _source_spans(record: Augmented, spans: Sequence[Span]) -> list[Span]:
    """The source spans the record speaks of: the rewritten one and those carried into the paraphrase."""
    carried = {(s.label, s.role, s.group) for s in record.spans}
    return [s for k, s in enumerate(spans) if k == record.target or (s.label, s.role, s.group) in carried]


def _record(run: Run, record: Augmented, k: int) -> str:
    main = [f'<span class="score">{key} <b>{record.scores[key]:.3g}</b></span>' for key in ("paraphrase", "alignment", "rank") if key in record.scores]
    extra = " · ".join(f"{key} {v:.3g}" for key, v in record.scores.items() if key not in ("paraphrase", "alignment", "rank"))
    source = run.sources.get(record.source_id)
    left = (highlighted(source.tokens, _source_spans(record, source.spans)) if source is not None
            else '<span class="muted">(source sentence not at hand)</span>')
    constraints = []
    if record.constraints.avoid:
        constraints.append(f"<div>avoid ({len(record.constraints.avoid)}): {_chips(record.constraints.avoid, 'avoid')}</div>")
    if record.constraints.include:
        constraints.append(f"<div>include: {_chips(record.constraints.include, 'include')}</div>")
    if record.constraints.prefer:
        constraints.append(f"<div>offered: {_chips(record.constraints.prefer, 'prefer')}</div>")
    return (
        f'<article class="rec" id="rec-{k}"><div class="rec-head"><code>{esc(record.id)}</code>'
        f'<span class="badge">iteration {record.iteration}</span>{"".join(main)}'
        f'{f"<span class=extra>{esc(extra)}</span>" if extra else ""}</div>'
        f'<div class="pair"><div><div class="side-label">source · <span class="id">{esc(record.source_id)}</span></div><p class="sent">{left}</p></div>'
        f'<div><div class="side-label">paraphrase</div><p class="sent">{highlighted(record.tokens, record.spans)}</p></div></div>'
        f'<div class="constraints">{"".join(constraints) or "no constraints"}</div></article>'
    )


def _records_section(run: Run, limit: int) -> str:
    if not run.records:
        return _note("augmented.jsonl holds no records")
    shown = run.records[:limit]
    roles = sorted({s.role for r in shown for s in r.spans}, key=lambda role: (ROLE_ORDER.get(role, len(ROLE_ORDER)), role))
    legend = "".join(f'<span><mark class="{_role_class(role)}">{esc(role)}</mark></span>' for role in roles)
    head = f"<p>Showing {len(shown)} of {len(run.records)} accepted records"
    if len(shown) < len(run.records):
        head += f" ({len(run.records) - len(shown)} left out: raise --limit to see more; every chart and table above counts them all)"
    head += f'. <span class="legend">Span roles: {legend}</span> Hover a span for its label, role and group.</p>'
    return head + '<div class="pager" id="pager"></div>' + "".join(_record(run, r, k) for k, r in enumerate(shown))


def render_report(
    run: Run,
    judgments: Sequence[Judgment] | None = None,
    limit: int = 500,
    tagger: Callable[[], TaggerChoice] = find_tagger,
) -> str:
    """The report page for ``run``; ``tagger`` is called only when there are span pairs to tag."""
    title = f"spanaug report: {run.folder.name or run.folder}"
    sections = [
        ("run", "Run", _run_section(run)),
        ("scores", "Scores", _scores_section(run)),
        ("filters", "Filters", _filters_section(run, judgments)),
        ("diversity", "Diversity", _diversity_section(run, tagger)),
        ("records", "Records", _records_section(run, limit)),
    ]
    notes = "".join(f"<li>{esc(n)}</li>" for n in run.notes)
    body = [f"<h1>{esc(title)}</h1>", f'<p class="meta">{esc(str(run.folder))}</p>',
            f'<ul class="notes">{notes}</ul>' if notes else "",
            "<nav>" + "".join(f'<a href="#{key}">{name}</a>' for key, name, _ in sections) + "</nav>"]
    body += [f'<section id="{key}"><h2>{name}</h2>{html_}</section>' for key, name, html_ in sections]
    template = files("spanaug_report").joinpath("report.html").read_text(encoding="utf-8")
    return template.replace("__TITLE__", esc(title)).replace("__BODY__", "".join(body))
