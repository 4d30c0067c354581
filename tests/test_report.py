"""Report types: Compare kinds, tallies per kind, the summary line; hand-built tables are the oracle."""

import json

import pytest

from topocast.report import Claim, Compare, Report, Table, Tally, total_line


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
    assert data["counts"] == {"printed_matched": 2, "printed_mismatched": 1, "closed_form_passed": 1,
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


def test_csv_rows_keep_their_shape():
    header, rows = _table().csv_rows()
    assert header == ["what", "a", "a (paper)", "a match", "b", "b (paper)", "b match"]
    assert rows[0] == ["row 1", 3, 3, True, 4, 5, False]
    assert rows[3] == ["row 4", 33, 33, None, 32, 31, None]
