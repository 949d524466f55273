"""Learning-curve bookkeeping: nested resampled subsets, paired conditions, resumable rows, summary."""

from __future__ import annotations

import csv

import pytest

from spanaug_core.errors import ConfigError, DataError
from spanaug_core.types import Example
from spanaug_experiments.curve import (COLUMNS, CurveOptions, cells, checked_rows, done_keys, merge_results, paired, run_curve, subset,
                                       summarize, write_paired, write_summary)

POOL = [Example(id=f"g{i}", tokens=("w",) * (i + 1)) for i in range(10)]
EXTRA = {"augmented": {f"g{i}": [Example(id=f"g{i}/a{k}", tokens=("x",)) for k in range(i % 3)] for i in range(10)}}


def fake_trainer(calls: list):
    """Scores a model by how many examples it saw, so the rows can be checked exactly."""

    def train_and_test(gold, extra, model_dir, seed):
        examples = [*gold, *extra]
        calls.append(([e.id for e in examples], seed, model_dir))
        model_dir.mkdir(parents=True, exist_ok=True)
        (model_dir / "weights").write_text("w")
        f1 = len(examples) / 100
        return {"dev_f1": f1, "epochs_run": 3.0}, {"precision": f1, "recall": f1, "f1": f1}

    return train_and_test


def test_subsets_are_nested_per_seed_and_resampled_across_seeds() -> None:
    small, large = subset(POOL, 0.3, seed=1), subset(POOL, 0.6, seed=1)
    assert len(small) == 3 and len(large) == 6 and large[:3] == small
    assert subset(POOL, 0.6, seed=2) != large
    assert len(subset(POOL, 0.01, seed=0)) == 1  # never an empty training set
    assert subset(POOL, 1.0, seed=3) != POOL and sorted(e.id for e in subset(POOL, 1.0, seed=3)) == sorted(e.id for e in POOL)


def test_options_are_validated() -> None:
    assert CurveOptions(fractions=(1, 0.5, 0.5)).fractions == (0.5, 1.0)
    with pytest.raises(ValueError, match=r"fractions must lie in \(0, 1\]"):
        CurveOptions(fractions=(0, 0.5))
    with pytest.raises(ValueError, match="unknown condition"):
        CurveOptions(conditions=("gold", "paraphrase"))
    assert [c.key for c in cells(CurveOptions(fractions=(0.5,), seeds=2))] == [
        ("gold", "0.5", "0"), ("augmented", "0.5", "0"), ("gold", "0.5", "1"), ("augmented", "0.5", "1")]
    assert [c.key[2] for c in cells(CurveOptions(fractions=(0.5,), seeds=2, first_seed=10, conditions=("gold",)))] == ["10", "11"]


def test_conditions_share_the_gold_subset_and_add_only_its_records(tmp_path) -> None:
    calls: list = []
    rows = run_curve(POOL, EXTRA, fake_trainer(calls), CurveOptions(fractions=(0.5,), seeds=1), tmp_path)
    (gold_ids, seed, _), (aug_ids, _, _) = calls
    gold = [i for i in gold_ids]
    assert seed == 0 and aug_ids[: len(gold)] == gold
    added = aug_ids[len(gold) :]
    assert added == [f"{g}/a{k}" for g in gold for k in range(int(g[1:]) % 3)]
    assert [r["condition"] for r in rows] == ["gold", "augmented"]
    assert rows[1]["added_examples"] == str(len(added)) and rows[0]["added_examples"] == "0"
    assert float(rows[1]["test_f1"]) == pytest.approx(len(aug_ids) / 100)


def test_a_rerun_skips_finished_cells_and_rows_survive_an_interrupt(tmp_path) -> None:
    calls: list = []
    options = CurveOptions(fractions=(0.5, 1.0), seeds=2)

    def interrupted(gold, extra, model_dir, seed):
        if len(calls) == 3:
            raise KeyboardInterrupt
        return fake_trainer(calls)(gold, extra, model_dir, seed)

    with pytest.raises(KeyboardInterrupt):
        run_curve(POOL, EXTRA, interrupted, options, tmp_path)
    with (tmp_path / "results.csv").open() as fh:
        assert len(list(csv.DictReader(fh))) == 3  # flushed row by row
    rest: list = []
    rows = run_curve(POOL, EXTRA, fake_trainer(rest), options, tmp_path)
    assert len(rest) == 5 and len(rows) == 8
    assert len({(r["condition"], r["fraction"], r["seed"]) for r in rows}) == 8
    assert not (tmp_path / "models").exists() and not any(folder.exists() for *_, folder in rest)  # temporary folders go


def test_keep_models_and_bad_inputs(tmp_path) -> None:
    calls: list = []
    run_curve(POOL, EXTRA, fake_trainer(calls), CurveOptions(fractions=(1.0,), seeds=1, conditions=("gold",)), tmp_path, keep_models=True)
    assert (tmp_path / "models" / "gold-1-0" / "weights").is_file()
    with pytest.raises(ConfigError, match="need their extra examples"):
        run_curve(POOL, {}, fake_trainer(calls), CurveOptions(conditions=("gold", "lexsub")), tmp_path / "x")
    with pytest.raises(ConfigError, match="pool is empty"):
        run_curve([], EXTRA, fake_trainer(calls), CurveOptions(), tmp_path / "y")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "results.csv").write_text("a,b\n1,2\n")
    with pytest.raises(DataError, match="expected the columns condition, fraction"):
        run_curve(POOL, EXTRA, fake_trainer(calls), CurveOptions(), bad)


def test_summary_means_and_sample_std(tmp_path) -> None:
    rows = [dict(zip(COLUMNS, [c, "0.5", str(s), "5", "2", "", "", "", f1, "3", "1.0", "", ""]))
            for c, s, f1 in [("gold", 0, "0.5"), ("gold", 1, "0.7"), ("augmented", 0, "0.6"), ("augmented", 1, "0.6")]]
    points = summarize(rows)
    assert [(p.condition, p.runs) for p in points] == [("gold", 2), ("augmented", 2)]
    assert points[0].mean == pytest.approx(0.6) and points[0].std == pytest.approx(0.1414, abs=1e-4)
    assert points[1].std == 0.0 and points[0].unseen_mean is None
    write_summary(points, tmp_path / "summary.csv")
    assert (tmp_path / "summary.csv").read_text().splitlines()[1] == "gold,0.5,2,0.6000,0.1414,5.0,2.0,,"


def test_paired_differences_follow_the_seeds() -> None:
    # Seed by seed augmented is 0.02 above gold though the seeds differ by far more: a paired
    # test sees it, a comparison of the two means' spreads would not.
    gold = {0: 0.50, 1: 0.60, 2: 0.70, 3: 0.55}
    rows = [dict(zip(COLUMNS, [c, "1", str(s), "5", "2", "", "", "", f"{f1 + (0.02 + 0.001 * s if c != 'gold' else 0):.4f}", "3", "1.0",
                               "10", f"{0.1 * (c != 'gold'):.4f}"]))
            for c in ("gold", "filtered") for s, f1 in gold.items()]
    by_metric = {c.metric: c for c in paired(rows)}
    f1 = by_metric["test_f1"]
    assert (f1.condition, f1.fraction, f1.runs) == ("filtered", 1.0, 4)
    assert f1.mean_diff == pytest.approx(0.0215) and f1.p < 0.001
    # the interval is mean ± t(0.975, 3) * std / sqrt(4); four gains out of four is the exact
    # signed-rank test's smallest two-sided p, 2 / 2**4
    assert f1.ci_low == pytest.approx(0.0215 - 3.1824 * 0.0012910 / 2, abs=1e-6) and f1.ci_high == pytest.approx(0.0215 + 3.1824 * 0.0012910 / 2, abs=1e-6)
    assert f1.wins == 4 and f1.wilcoxon_p == pytest.approx(0.125)
    recall = by_metric["unseen_recall"]
    assert recall.mean_diff == pytest.approx(0.1) and recall.std_diff == 0.0 and recall.p is None  # no spread, no test
    assert recall.ci_low is None and recall.wins == 4 and recall.wilcoxon_p is not None  # ranks need no spread
    points = summarize(rows)
    assert points[1].condition == "filtered" and points[1].unseen_mean == pytest.approx(0.1)


def test_paired_rows_are_written(tmp_path) -> None:
    calls: list = []
    rows = run_curve(POOL, EXTRA, fake_trainer(calls), CurveOptions(fractions=(0.5, 1.0), seeds=3), tmp_path)
    write_paired(paired(rows), tmp_path / "paired.csv")
    lines = (tmp_path / "paired.csv").read_text().splitlines()
    assert lines[0] == "fraction,condition,metric,runs,mean_diff,std_diff,t,p,ci_low,ci_high,wins,wilcoxon_p"
    assert [line.split(",")[:4] for line in lines[1:]] == [["0.5", "augmented", "test_f1", "3"], ["1", "augmented", "test_f1", "3"]]


def test_a_second_experiment_on_the_same_folder_is_refused(tmp_path) -> None:
    calls: list = []

    def nested(gold, extra, model_dir, seed):  # another run starts while this one trains
        with pytest.raises(ConfigError, match="another experiment is writing"):
            run_curve(POOL, EXTRA, fake_trainer([]), CurveOptions(fractions=(1.0,), seeds=1), tmp_path)
        return fake_trainer(calls)(gold, extra, model_dir, seed)

    run_curve(POOL, EXTRA, nested, CurveOptions(fractions=(1.0,), seeds=1, conditions=("gold",)), tmp_path)
    assert len(calls) == 1


HEADER = ",".join(COLUMNS) + "\n"
ROW = "gold,0.5,{seed},136,0,0.5,0.5,0.5,0.5,3,1.0,20,0.25\n"


@pytest.mark.parametrize(("text", "message"), [
    (HEADER + ROW.format(seed=0) + ROW.format(seed=1).replace("0.5,", "half,", 1), r"bad.csv:3: fraction is 'half'; expected a number above 0"),
    (HEADER + ROW.format(seed=0).replace(",0.5,3,", ",abc,3,"), r"bad.csv:2: test_f1 is 'abc'; expected a number from 0 to 1"),
    (HEADER + ROW.format(seed=0).replace(",0.25", "") + ROW.format(seed=1), r"bad.csv:2: expected 13 fields, found 12: no value for unseen_recall$"),
    (HEADER + ROW.format(seed=0) + "gold,0.5,1,136,0", r"bad.csv:3: expected 13 fields, found 5: no value for dev_f1, test_precision, .*, unseen_recall$"),
    (HEADER + ROW.format(seed=0).replace("gold", ""), r"bad.csv:2: condition is empty; expected a condition's name"),
    (HEADER + ROW.format(seed=0).replace(",3,", ",3.5,"), r"bad.csv:2: epochs_run is '3.5'; expected a whole number"),
    ("", r"bad.csv: is empty; expected a header with the columns condition, fraction, seed"),
    (HEADER.replace("test_f1", "test_F1") + ROW.format(seed=0),
     r"bad.csv:1: expected the columns condition, .*, unseen_recall; found a header that lacks test_f1 and has test_F1$"),
    (HEADER + ROW.format(seed=0) + "gold,0.5,1,136,0,\xe9", r"bad.csv:3: not valid utf-8: byte b'\\xe9'"),
])
def test_a_results_file_that_is_not_one_names_the_line_and_what_was_expected(tmp_path, text, message) -> None:
    path = tmp_path / "bad.csv"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(DataError, match=message) as found:
        merge_results([path])
    assert not found.value.hint  # the advice to remove the file is for an --out folder's own results


def test_a_results_file_may_leave_the_optional_columns_empty_and_start_with_a_byte_order_mark(tmp_path) -> None:
    # No dev set leaves dev_f1 empty, a curve without --unseen the unseen columns; Excel saves a BOM.
    path = tmp_path / "results.csv"
    path.write_text("\ufeff" + HEADER + ROW.format(seed=0).replace("0.5,0.5,0.5,0.5,3,1.0,20,0.25", ",0.5,0.5,0.5,3,1.0,,") + "\n",
                    encoding="utf-8")
    (row,) = merge_results([path])
    assert (row["condition"], row["dev_f1"], row["test_f1"], row["unseen_recall"]) == ("gold", "", "0.5", "")


def test_a_header_alone_is_a_run_stopped_early_but_nothing_to_join(tmp_path) -> None:
    path = tmp_path / "results.csv"
    path.write_text(HEADER, encoding="utf-8")
    assert checked_rows(path) == [] and done_keys(path) == set()
    with pytest.raises(DataError, match=r"results.csv: holds no results"):
        merge_results([path])


def test_a_bad_row_in_the_out_folder_says_what_to_do(tmp_path) -> None:
    (tmp_path / "results.csv").write_text(HEADER + "gold,0.5,0,136", encoding="utf-8")  # a row cut short by a full disk
    with pytest.raises(DataError, match=r"results.csv:2: expected 13 fields, found 4") as found:
        run_curve(POOL, EXTRA, fake_trainer([]), CurveOptions(), tmp_path)
    assert found.value.hint.endswith("correct it, remove it or pick another --out")
