"""The run report: a hand-made run folder in the real format -> the HTML page, its numbers and its errors."""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from spanaug_core.outcomes import Rejection
from spanaug_core.text import detokenize
from spanaug_core.types import Augmented, Constraints, Example, Span
from spanaug_shared.judgments import read_judgments
from spanaug_shared.postag import TaggerChoice
from spanaug_report.page import highlighted, render_report
from spanaug_report.pos import jaccard_distance, weighted_jaccard_distance
from spanaug_report.rundir import load_run
from spanaug_report.stats import histogram, integer_bins, rule_scores, span_pairs
from spanaug_report.svg import bar_chart


def toks(text: str) -> tuple[str, ...]:
    return tuple(text.split())


def target(start: int, end: int, label: str) -> Span:
    return Span(start=start, end=end, label=label, role="target", group="as1")


def argument(start: int, end: int, label: str) -> Span:
    return Span(start=start, end=end, label=label, role="argument", group="as1")


SOURCES = [
    Example(id="g1", tokens=toks("The panel will corroborate the findings ."),
            spans=(target(3, 4, "Evidence"), argument(0, 2, "Support"), argument(4, 6, "Proposition"))),
    Example(id="g2", tokens=toks("Glaciers move slowly <here> ."), spans=(target(1, 2, "Motion"), argument(0, 1, "Theme"))),
    Example(id="g3", tokens=toks("Alice visited Paris ."),
            spans=(Span(start=0, end=1, label="PER", role="entity"), Span(start=2, end=3, label="LOC", role="entity"))),
]
AVOID = ("corroborate", "corroborates", "corroborated", "corroborating", "Corroborate", "CORROBORATE",
         "confirm", "confirms", "confirmed", "confirming", "Confirm", "CONFIRM")


def record(rid: str, source: str, tgt: int | None, iteration: int, text: str, spans: tuple[Span, ...],
           paraphrase: float, alignment: float, avoid: tuple[str, ...] = (), include: tuple[str, ...] = ()) -> Augmented:
    tokens = toks(text)
    return Augmented(id=rid, source_id=source, target=tgt, iteration=iteration, tokens=tokens, text=detokenize(tokens),
                     spans=spans, scores={"paraphrase": paraphrase, "paraphrase_logprob": paraphrase * 7, "alignment": alignment, "rank": 0.0},
                     constraints=Constraints(avoid=avoid, include=include),
                     components={"decoder": "vdba", "aligner": "bert-span", "expander": "inflect"})


RECORDS = [
    record("g1/s0/it1", "g1", 0, 1, "The panel will confirm the findings .",
           (target(3, 4, "Evidence"), argument(0, 2, "Support"), argument(4, 6, "Proposition")), -0.31, 0.97,
           AVOID[:6], ("The panel", "the findings")),
    record("g1/s0/it2", "g1", 0, 2, "The findings will be verified by the panel .",
           (target(3, 5, "Evidence"), argument(0, 2, "Proposition"), argument(6, 8, "Support")), -0.72, 0.90, AVOID),
    record("g2/s0/it1", "g2", 0, 1, "Glaciers travel slowly <here> .", (target(1, 2, "Motion"), argument(0, 1, "Theme")), -0.45, 0.99,
           ("move", "moves"), ("Glaciers",)),
    record("g3/it1", "g3", None, 1, "Alice went to Paris .",
           (Span(start=0, end=1, label="PER", role="entity"), Span(start=3, end=4, label="LOC", role="entity")), -0.5, 1.0,
           (), ("Alice", "Paris")),
]
DROPPED = record("g2/s0/it2", "g2", 0, 2, "Glaciers glide slowly <here> .", (target(1, 2, "Motion"),), -0.9, 0.31)
REJECTED = [
    Rejection("g2", 0, 2, "alignment-score: alignment score 0.31 < 0.5", DROPPED.constraints, DROPPED),
    Rejection("g1", 0, 3, "no-alignment", Constraints(avoid=AVOID)),
]
MANIFEST = {
    "status": "completed", "created": "2026-11-01T10:00:00+00:00", "spanaug_version": "0.1.0",
    "config": {"dataset": {"name": "jsonl"}, "iterations": 3, "top_m": 4, "chain": False, "rewrite_roles": ["target"],
               "decoder": {"name": "vdba", "model": "tiny"}, "aligner": {"name": "bert-span"}, "expander": {"name": "inflect"},
               "filters": [{"name": "alignment-score", "min_score": 0.5}, {"name": "copy"}], "lexicon": {"name": "framenet"}},
    "options": {"lexicon": {"release": "data/fndata-1.5", "words": 4}},
    "reader_warnings": {"sentences listed again with other annotations, kept as <id>-2": 19},
    "counts": {"examples": 3, "jobs": 3, "accepted": 4, "rejected": 1, "stopped": {"no-alignment": 1}, "decode_s": 1.5, "align_s": 0.2},
    "timings": {"updated": "2026-11-01T10:01:00+00:00", "elapsed_s": 60.0},
}
# accepted per record id: two of the unfiltered outputs, and the one the run's filter dropped was rightly rejected.
JUDGED = {"g1/s0/it1": True, "g1/s0/it2": False, "g2/s0/it1": True, "g2/s0/it2": False}

# A scripted tagger: verbs by word, "verified" a participle, the rest nouns.
VERBS = {"corroborate", "confirm", "move", "travel", "glide", "be", "visited", "went"}


def fake_tags(batch):
    return [["VBN" if t == "verified" else "VB" if t in VERBS else "." if t == "." else "NN" for t in tokens] for tokens in batch]


FAKE = TaggerChoice(fake_tags, "a scripted test tagger")


def write_run(folder: Path, sources: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "augmented.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in RECORDS), encoding="utf-8")
    (folder / "rejected.jsonl").write_text("".join(json.dumps(r.to_json()) + "\n" for r in REJECTED), encoding="utf-8")
    manifest = {**MANIFEST, "config": {**MANIFEST["config"], "input": str(sources), "output": str(folder)}}
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return folder


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """A run folder as `spanaug run` writes it, whose manifest names its input (the source examples)."""
    sources = tmp_path / "sources.jsonl"
    sources.write_text("".join(e.model_dump_json() + "\n" for e in SOURCES), encoding="utf-8")
    return write_run(tmp_path / "run", sources)


@pytest.fixture
def judgments(tmp_path: Path) -> Path:
    by_id = {r.id: r for r in [*RECORDS, DROPPED]}
    path = tmp_path / "judgments.jsonl"
    lines = [{"id": rid, "item": f"t{k}-1", "iteration": by_id[rid].iteration, "scores": by_id[rid].scores, "accepted": ok,
              "mean": 80.0 if ok else 20.0} for k, (rid, ok) in enumerate(JUDGED.items(), 1)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture
def spanaug(cli):
    return cli("report,jsonl")


def test_highlighting_marks_spans_by_role_with_their_labels_and_escapes_text() -> None:
    tokens = toks('He said , " <b>yes</b> " .')
    spans = [Span(start=0, end=2, label="Speaker & co", role="argument"), Span(start=1, end=2, label="Say", role="target"),
             Span(start=4, end=5, label="Msg", role="mystery")]
    page = highlighted(tokens, spans)
    # Nested spans: "He" is the argument alone, "said" takes the target's colour and both labels end there.
    assert page.startswith('<mark class="r-argument" title="Speaker &amp; co (argument)">He</mark> ')
    assert '<mark class="r-target" title="Speaker &amp; co (argument); Say (target)">said<span class="lab">Speaker &amp; co</span><span class="lab">Say</span></mark>' in page
    assert '<mark class="r-other" title="Msg (mystery)">&lt;b&gt;yes&lt;/b&gt;<span class="lab">Msg</span></mark>' in page
    assert re.sub(r"<[^>]+>|Speaker &amp; co|Say|Msg", "", page).replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"') == detokenize(tokens)
    # Around a hyphen between words (whose spacing looks ahead) no letter is lost or repeated.
    tokens = toks("SOCCER - FIORENTINA beat Milan")
    page = highlighted(tokens, [Span(start=2, end=3, label="ORG", role="entity")])
    assert '<mark class="r-entity" title="ORG (entity)">FIORENTINA<span class="lab">ORG</span></mark>' in page
    assert re.sub(r"<[^>]+>|ORG", "", page) == detokenize(tokens) == "SOCCER-FIORENTINA beat Milan"


def test_bins_and_distances() -> None:
    labels, counts = histogram({"a": [0.0, 0.5, 1.0], "b": [1.0]}, bins=4)
    assert labels == ["0.00", "0.25", "0.50", "0.75"] and counts == {"a": [1, 0, 1, 1], "b": [0, 0, 0, 1]}
    assert histogram({"a": [2.0, 2.0]}) == (["2.0"], {"a": [2]})
    assert integer_bins({"x": [1, 2, 2, 9]}, first=1, cap=5) == (["1", "2", "3", "4", "5+"], {"x": [1, 2, 0, 0, 1]})
    assert integer_bins({"x": [0, 4, 5, 12]}, width=5) == (["0-4", "5-9", "10-14"], {"x": [2, 1, 1]})
    assert jaccard_distance(["VB"], ["VB", "VBN"]) == 0.5 and jaccard_distance([], []) == 0.0
    assert weighted_jaccard_distance(["NN", "NN"], ["NN", "JJ"]) == pytest.approx(1 - 1 / 3)


def test_a_bar_chart_is_an_svg_with_a_bar_and_tooltip_per_count() -> None:
    svg = bar_chart("iteration", ["1", "2"], {"accepted": [3, 1], "rejected by a filter": [0, 1]}, "iteration")
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert svg.count("<rect") == 4 + 2  # four bars, two legend swatches
    assert "<title>accepted, iteration 1: 3</title>" in svg


def test_table4_scores_rules_against_the_judgments(run_dir: Path, judgments: Path) -> None:
    run = load_run(run_dir)
    scores = {s.name: s for s in rule_scores(run, read_judgments(judgments))}
    unfiltered = scores["unfiltered"]
    assert (unfiltered.kept, unfiltered.precision, unfiltered.recall) == (4, 0.5, 1.0)
    assert unfiltered.multiple == pytest.approx(1 + 4 / 3)  # seed 3 examples, 4 accepted records
    first = scores["iteration = 1"]
    assert (first.kept, first.precision, first.recall, first.multiple) == (2, 1.0, 1.0, 2.0)
    assert (scores["paraphrase ≥ -0.6"].kept, scores["paraphrase ≥ -0.6"].precision) == (2, 1.0)
    strict = scores["strict conjunction"]  # g2/s0/it1 (judged) and g3/it1 (not judged) pass it
    assert (strict.kept, strict.precision, strict.recall, strict.multiple) == (1, 1.0, 0.5, pytest.approx(1 + 2 / 3))
    # One judged output is a record the run's alignment filter dropped: the run's filters get a row.
    own = scores["this run's filters"]
    assert (own.kept, own.precision, own.spec) == (3, pytest.approx(2 / 3), "[alignment-score, copy]")


def test_span_pairs_and_position_shift(run_dir: Path) -> None:
    run = load_run(run_dir)
    assert set(run.sources) == {"g1", "g2", "g3"} and run.notes == []
    pairs = span_pairs(run.records, run.sources, run.rewrite_roles)
    assert [(p.source, p.aligned, p.shift) for p in pairs] == [((3, 4), (3, 4), 0), ((3, 4), (3, 5), 1), ((1, 2), (1, 2), 0)]


def test_the_page_shows_records_spans_charts_filters_and_diversity(run_dir: Path, judgments: Path) -> None:
    page = render_report(load_run(run_dir), read_judgments(judgments), tagger=lambda: FAKE)
    # Self-contained: nothing is fetched.
    assert not re.search(r"""(src|href)=["']?(https?:)?//|@import|url\(""", page)
    assert "<title>spanaug report: run</title>" in page and 'status-completed">completed' in page
    # Every record, source beside paraphrase, spans marked by role, scores, iteration and constraints.
    assert page.count('<article class="rec"') == 4
    assert "The panel will corroborate the findings." in re.sub(r"<[^>]+>|Support|Evidence|Proposition", "", page)
    assert '<mark class="r-target" title="Evidence (target, as1)">confirm<span class="lab">Evidence</span></mark>' in page
    assert '<mark class="r-target" title="Evidence (target, as1)">corroborate<span class="lab">Evidence</span></mark>' in page
    assert '<mark class="r-argument" title="Support (argument, as1)">The panel<span class="lab">Support</span></mark>' in page
    assert '<mark class="r-entity" title="LOC (entity)">Paris<span class="lab">LOC</span></mark>' in page
    assert "travel" in page and "&lt;here&gt;" in page and "<here>" not in page
    assert "paraphrase <b>-0.31</b>" in page and "alignment <b>0.97</b>" in page and "iteration 2</span>" in page
    assert "avoid (12):" in page and "+2 more</summary>" in page and '<span class="chip include">the findings</span>' in page
    # Histograms of the scores and iterations, accepted beside filtered records.
    assert page.count("<svg") == 5
    for title in ("paraphrase score", "alignment score", "iteration", "span length (Fig. 4)", "position shift (Fig. 5)"):
        assert f'aria-label="{title}"' in page
    assert "<title>rejected by a filter, iteration 2: 1</title>" in page
    # The filter table: kept, dropped per filter (a filter that dropped nothing too), stopped per reason.
    assert re.search(r"<td>kept</td><td><code>augmented.jsonl</code></td><td class=\"num\">4</td><td class=\"num\">80.0%</td>", page)
    assert re.search(r"<code>alignment-score</code></td><td class=\"num\">1</td><td class=\"num\">20.0%</td><td>alignment score 0.31 &lt; 0.5", page)
    assert re.search(r"<code>copy</code></td><td class=\"num\">0</td>", page)
    assert re.search(r"<td>span stopped</td><td><code>no-alignment</code></td><td class=\"num\">1</td>", page)
    # Table 4 rows with precision, recall and the multiple.
    assert re.search(r"<td>iteration = 1</td><td><code>\[\{name: max-iteration, max_iteration: 1\}\]</code></td>"
                     r"<td class=\"num\">2</td><td class=\"num\">100.0%</td><td class=\"num\">100.0%</td><td class=\"num\">2.00x</td>", page)
    assert "<td>this run&#x27;s filters</td>" in page
    # Table 3 with the scripted tagger: "corroborate"/"move" keep VB, "be verified" is VB VBN.
    assert re.search(r"source vs. aligned \(this run\)</td><td class=\"num\">3</td><td class=\"num\">33.3%</td>"
                     r"<td class=\"num\">16.7%</td><td class=\"num\">16.7%</td>", page)
    assert "<code>VB VBN</code>" in page and "a scripted test tagger" in page
    # The lexicon with the options it ran with (the release it read), and what the reader repaired.
    assert "<code>framenet</code> <span class='muted'>release=data/fndata-1.5, words=4</span>" in page
    assert "<td>the reader repaired or skipped</td><td>19 sentences listed again with other annotations, kept as &lt;id&gt;-2</td>" in page
    # A manifest from before per_round: one record a round.
    assert "<td>iterations · top-m · per round · chain</td><td>3 · 4 · 1 · False</td>" in page


def test_the_command_writes_the_page_and_says_what_it_left_out(spanaug, run_dir: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setattr("spanaug_shared.postag.find_tagger", lambda: TaggerChoice(None, "no POS tagger is installed (test)"))
    assert spanaug("report", run_dir, "--limit", 2) == 0
    page = (run_dir / "report.html").read_text(encoding="utf-8")
    assert page.count('<article class="rec"') == 2
    assert "Showing 2 of 4 accepted records (2 left out: raise --limit" in page
    assert '<p class="note">no POS tagger is installed (test)</p>' in page and "span length (Fig. 4)" in page
    assert "pass --judgments FILE" in page
    err = capsys.readouterr().err
    assert "no POS tagger is installed (test)" in err and f"wrote {run_dir / 'report.html'}: 2 of 4 records" in err


def test_an_earlier_report_is_replaced_as_the_help_says(spanaug, run_dir: Path, capsys) -> None:
    (run_dir / "report.html").write_text("earlier\n", encoding="utf-8")
    assert spanaug("report", run_dir) == 0
    assert (run_dir / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    capsys.readouterr()
    assert spanaug("report", "--help") == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "replaced if it exists" in shown and "(Culkin et al. 2021, Table 4)" in shown


def test_without_sources_the_page_says_why(spanaug, run_dir: Path, tmp_path: Path, capsys) -> None:
    (tmp_path / "sources.jsonl").unlink()
    out = tmp_path / "elsewhere" / "r.html"
    assert spanaug("report", run_dir, "--output", out) == 0
    page = out.read_text(encoding="utf-8")
    assert "source sentences not shown: the run&#x27;s input (jsonl dataset" in page
    assert "(source sentence not at hand)" in page and "no source sentences at hand" in page
    # --source brings them back.
    other = tmp_path / "copy.jsonl"
    other.write_text("".join(e.model_dump_json() + "\n" for e in SOURCES), encoding="utf-8")
    assert spanaug("report", run_dir, "--output", out, "--source", other) == 0
    assert "(source sentence not at hand)" not in out.read_text(encoding="utf-8")


def test_judgments_add_table4_and_a_bad_judgment_names_its_line(spanaug, run_dir: Path, judgments: Path, capsys) -> None:
    assert spanaug("report", run_dir, "--judgments", judgments) == 0
    page = (run_dir / "report.html").read_text(encoding="utf-8")
    assert "4 judged outputs, 2 accepted (50.0%)" in page and "<td>lax conjunction</td>" in page
    judgments.write_text(judgments.read_text(encoding="utf-8") + '{"id": "g1/s0/it1", "iteration": 1}\n', encoding="utf-8")
    assert spanaug("report", run_dir, "--judgments", judgments) == 2
    assert re.search(r"judgments\.jsonl:5: not a judgment \(scores: Field required", capsys.readouterr().err)


def test_a_bare_folder_without_manifest_still_gets_a_page(spanaug, tmp_path: Path, capsys) -> None:
    folder = tmp_path / "bare"
    folder.mkdir()
    (folder / "augmented.jsonl").write_text(RECORDS[0].model_dump_json() + "\n", encoding="utf-8")
    assert spanaug("report", folder) == 0
    page = (folder / "report.html").read_text(encoding="utf-8")
    assert "no manifest.json: the run&#x27;s config and counts are unknown" in page
    assert "source sentences not shown: the run has no manifest naming its dataset" in page
    assert page.count('<article class="rec"') == 1 and 'status-unknown">unknown' in page


@pytest.mark.parametrize(("name", "line", "expected"), [
    ("augmented.jsonl", '{"id": "x"', r"augmented\.jsonl:5: invalid JSON"),
    ("augmented.jsonl", '{"id": "x", "source_id": "g1"}', r"augmented\.jsonl:5: not an augmented record \(target: Field required \(and \d+ more\)\)"),
    ("rejected.jsonl", '{"source_id": "g1", "iteration": 1}', r"rejected\.jsonl:3: not a rejected\.jsonl line \(reason: Field required\)"),
])
def test_a_malformed_line_is_an_error_naming_file_and_line(spanaug, run_dir: Path, capsys, name: str, line: str, expected: str) -> None:
    path = run_dir / name
    path.write_text(path.read_text(encoding="utf-8") + line + "\n", encoding="utf-8")
    assert spanaug("report", run_dir) == 2
    assert re.search(expected, capsys.readouterr().err)
    assert not (run_dir / "report.html").exists()


def test_a_folder_without_augmented_jsonl_is_an_error(spanaug, tmp_path: Path, capsys) -> None:
    assert spanaug("report", tmp_path) == 2
    assert f"{tmp_path}: expected a run folder with augmented.jsonl" in capsys.readouterr().err


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Chromium is not installed (apt-get install chromium)")
def test_the_page_renders_in_a_headless_browser(run_dir: Path, judgments: Path, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_report(load_run(run_dir), read_judgments(judgments), tagger=lambda: FAKE), encoding="utf-8")
    shot = tmp_path / "report.png"
    # The flags keep Chromium off the (closed) network; see the machine notes.
    subprocess.run(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
         "--virtual-time-budget=2000",
         f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,3000", f"--screenshot={shot}", page.as_uri()],
        check=True, capture_output=True, timeout=120,
    )
    assert _png_size(shot) == (1280, 3000)
    # A blank or unstyled page compresses to a few kilobytes; text, marks and charts do not.
    assert shot.stat().st_size > 60_000
