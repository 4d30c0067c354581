"""Report types: Compare kinds, tallies per kind, the summary line; hand-built tables are the oracle."""

import json

import pytest

from topocast.outputs.report import Claim, Compare, Report, Table, Tally, findings, total_line


def _table() -> Table:
    return Table("t", ["what", "a", "b"], [
        ["row 1", Compare(3, 3), Compare(4, 5)],                          # printed: 1 matched, 1 mismatched
        ["row 2", Compare(1.0, 1.05, rel_tol=0.1), Compare(7, None)],     # printed match within 10%; no paper value
        ["row 3", Compare(6, 6, kind="closed_form"), Compare(2, 3, kind="closed_form")],  # closed form: 1 and 1
        ["row 4", Compare(33, 33, kind="setting"), Compare(32, 31, kind="setting")],     # settings: never counted
    ])


def test_compare_kinds_and_match():
    assert Compare(3, 3).kind == "paper" and Compare(3, 3).match is True
    assert Compare(6, 6, kind="closed_form").match is True
    assert Compare(33, 33, kind="setting").match is None
    assert Compare(1, None).match is None
    assert Compare(33, 33, kind="setting").as_json() == {"ours": 33, "paper": 33, "match": None, "kind": "setting"}
    assert "(setting)" in Compare(33, 33, kind="setting").text()
    with pytest.raises(ValueError):
        Compare(1, 1, kind="guess")


def test_table_tally_per_kind():
    tally = _table().tally()
    assert (tally.printed_matched, tally.printed_mismatched) == (2, 1)
    assert (tally.closed_form_passed, tally.closed_form_failed) == (1, 1)
    assert tally.settings_shown == 2
    assert _table().compared() == (3, 5)  # settings are never counted as a match
    data = _table().as_json()
    assert data["counts"] == {"printed_matched": 2, "printed_mismatched": 1, "printed_not_comparable": 0,
                              "derived_matched": 0, "derived_mismatched": 0, "closed_form_passed": 1,
                              "closed_form_failed": 1, "settings_shown": 2}
    assert (data["matched"], data["compared"]) == (3, 5)


def test_report_summary_line_and_json(tmp_path):
    report = Report("demo", "Demo", [_table(), _table()],
                    [Claim("holds", True, "e"), Claim("fails", False, "e"), Claim("holds too", True, "e")])
    line = report.summary_line()
    assert line == ("summary demo: printed cells 4/6 matched (2 mismatched), closed-form checks 2/4, "
                    "claims 2 confirmed / 1 refuted, 4 settings shown (not counted)")
    summary = report.as_json()["summary"]
    assert summary["line"] == line and summary["claims_refuted"] == 1 and summary["printed_matched"] == 4
    written = report.write(tmp_path)
    assert json.loads((tmp_path / "demo_report.json").read_text())["summary"]["settings_shown"] == 4
    assert all(p.exists() for p in written) and len(written) == 3


def test_summary_without_settings_and_total():
    a = Report("a", "A", [Table("t", ["x"], [[Compare(1, 1)]])], [Claim("c", True, "e")])
    b = Report("b", "B", [Table("t", ["x"], [[Compare(1, 2, kind="closed_form")]])], [Claim("c", False, "e")])
    assert a.summary_line() == ("summary a: printed cells 1/1 matched (0 mismatched), closed-form checks 0/0, "
                                "claims 1 confirmed / 0 refuted")
    assert total_line([a, b]) == ("summary all: printed cells 1/1 matched (0 mismatched), closed-form checks 0/1, "
                                  "claims 1 confirmed / 1 refuted")
    assert Tally(printed_matched=1) + Tally(printed_matched=2) == Tally(printed_matched=3)


def test_csv_rows_are_tidy():
    header, rows = _table().csv_rows()
    # the columns mix printed values with settings: "(reference)", not "(paper)", and the kind of each beside it
    assert header == ["what", "a", "a (reference)", "a match", "a reference", "b", "b (reference)", "b match",
                      "b reference"]
    only_printed = Table("t", ["x"], [[Compare(1, 1)], [Compare(2, 3)]])
    assert only_printed.csv_rows()[0] == ["x", "x (paper)", "x match"]
    assert rows[0] == ["row 1", 3, 3, True, "paper", 4, 5, False, "paper"]
    assert rows[3] == ["row 4", 33, 33, None, "setting", 32, 31, None, "setting"]
    assert len({len(r) for r in rows} | {len(header)}) == 1


def test_tidy_csv_splits_intervals_words_and_ragged_rows():
    table = Table("Figure 3: latency (cycles)", ["load", "DP", "MP"],
                  [[0.001, "100 ±7", "1,5"], [0.016, "sat"], ["total", "1e3 ±2.5", "—"]])
    header, rows = table.csv_rows()
    assert header == ["load", "load note", "DP", "DP ±95% CI", "DP note", "MP"]
    assert rows == [[0.001, None, 100, 7, None, "1,5"], [0.016, None, None, None, "sat", None],
                    [None, "total", 1000.0, 2.5, None, None]]
    assert table.tidy_json() == {"columns": header, "rows": rows}


def test_table_keys_are_short_stable_and_unique(tmp_path):
    report = Report("demo", "Demo", [Table("Table 3: SFATA (ours | paper)", ["x"], [[1]]),
                                     Table("Figures 3-6: latency", ["x"], [[1]]),
                                     Table("Algorithms 1 and 2 as printed", ["x"], [[1]]),
                                     Table("The paper's QG claims", ["x"], [[1]]),
                                     Table("Table 3: again", ["x"], [[1]]),
                                     Table("anything", ["x"], [[1]], key="mine")])
    assert report.table_keys() == ["table3", "figures3_6", "algorithms1_2", "qg_claims", "table3_2", "mine"]
    names = sorted(p.name for p in report.write(tmp_path))
    assert names[0] == "demo_algorithms1_2.csv" and "demo_report.json" in names


def test_claim_readings_and_depending_count():
    same = Claim("c", True, "e", readings={"a": True, "b": True})
    split = Claim("d", False, "e", readings={"x=all": False, "x=used": True})
    assert (same.verdict, split.verdict) == ("confirmed", "depends")
    assert split.readings_text() == "holds under x=used; refuted under x=all"
    assert split.as_json()["readings"] == {"x=all": False, "x=used": True}
    report = Report("r", "R", [], [same, split, Claim("e", True, "e")])
    assert report.summary_line() == ("summary r: printed cells 0/0 matched (0 mismatched), closed-form checks 0/0, "
                                     "claims 2 confirmed / 1 refuted (1 of them depend on the reading)")


def test_not_comparable_and_derived_cells_are_counted_apart():
    table = Table("Table 3: times", ["m", "a", "b", "c"], [
        ["time", Compare(48.3, 56500, kind="not_comparable"), Compare(60.5, 73700, kind="not_comparable"),
         Compare(1.0, None, kind="not_comparable")],                      # no printed value: nothing to count
        ["ratio", Compare(1.75, 67400 / 56500, rel_tol=0.1, kind="derived"), Compare(1.0, 1.05, rel_tol=0.1,
                                                                                     kind="derived"), 3],
        ["share", Compare(5.0, 5.0), Compare(4.0, 5.0), "x"],
    ])
    tally = table.tally()
    assert tally.printed_not_comparable == 2 and (tally.printed_matched, tally.printed_mismatched) == (1, 1)
    assert (tally.derived_matched, tally.derived_mismatched) == (1, 1)   # 1.75 vs 1.193: apart by 47%
    assert all(c.match is None for c in table.rows[0][1:])                # never a match, never a mismatch
    assert table.compared() == (2, 4)
    assert "(not comparable)" in table.rows[0][1].text() and "(derived)" in table.rows[1][2].text()
    line = Report("r", "R", [table], []).summary_line()
    assert line == ("summary r: printed cells 1/2 matched (1 mismatched, 2 not comparable), derived from printed "
                    "cells 1/2 agree, closed-form checks 0/0, claims 0 confirmed / 0 refuted")
    header, rows = table.csv_rows()
    assert rows[0][header.index("a reference")] == "not_comparable" and rows[0][header.index("a match")] is None


def test_digit_identifiers_keep_their_leading_zero(tmp_path):
    """A row of Figure 5.5 of the thesis, '01325467', is an identifier: a number would lose its zero."""
    table = Table("Figure 5.5 rows", ["x", "row"], [[0, Compare("01325467", "01325467")],
                                                    [1, Compare("10234576", "10234576")]])
    header, rows = table.csv_rows()
    assert [r[1] for r in rows] == ["01325467", "10234576"] and [r[0] for r in rows] == [0, 1]
    report = Report("demo", "Demo", [table], [])
    report.write(tmp_path)
    text = (tmp_path / "demo_figure5_5.csv").read_text()
    assert "01325467" in text.splitlines()[1]
    plain = Table("t", ["id", "n"], [["0042", "7"], ["17", "8"]])
    assert plain.csv_rows()[1] == [["0042", 7], ["17", 8]]   # the id column stays text, the number column not


def _claims(verdict_mp: bool) -> list:
    return [Claim("DP and MP beat CP at low load", True, "Fig 3 @ 0.001: DP 97, CP 236", readings={"a": True,
                                                                                                   "b": True}),
            Claim("MP beats DP", verdict_mp, "long evidence; more", why="MP below DP at 1 of 6 loads"),
            Claim("QG saturates last", False, "e", readings={"routing=ecube": True, "routing=disjoint": False,
                                                             "other": False})]


def test_findings_are_computed_from_cells_and_verdicts():
    table = Table("Table 2: rates (ours | paper)", ["m", "a", "b"], [["x", Compare(1, 1), Compare(2, 3)],
                                                                   ["y", Compare(1.02, 1.0, rel_tol=0.05), 4]])
    report = Report("r", "R", [table, Table("Times", ["t"], [[Compare(5, 50000, kind="not_comparable")]])],
                    _claims(False), highlights=["fit: 56%"])
    f = findings(report)
    assert f["reproduced"] == ("2 of 3 comparable printed cells match, 1 of them within a stated tolerance "
                               "(Table 2 2/3); 1 printed cells are shown but not comparable; 1 claims hold under "
                               "every reading we ran.")
    assert f["held"] == ["DP and MP beat CP at low load"]
    assert f["refuted"] == "1 claims are refuted, under every reading we ran."
    assert f["refuted_items"] == ["MP beats DP: MP below DP at 1 of 6 loads"]
    assert f["depends"] == "1 claims depend on the reading."
    assert f["depends_items"] == ["QG saturates last: holds only under routing=ecube (fails under the other 2); "
                                  "under our default reading it fails"]
    assert f["highlights"] == ["fit: 56%"] and f["counts"] == report.summary_line()
    # the sentences follow the verdicts: the same report with MP's claim confirmed says so
    other = findings(Report("r", "R", report.tables, _claims(True)))
    assert other["refuted"] == "No claim is refuted under every reading we ran." and other["refuted_items"] == []
    assert "MP beats DP" in other["held"] and "2 claims hold" in other["reproduced"]
    assert report.as_json()["findings"] == f
    assert Claim("c", False, "first clause; second").short_why() == "first clause"
