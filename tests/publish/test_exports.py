"""Publishing the Parquet exports and the analytics copy (pipelines/publish/exports.py, the exports assets).

What readers of ``exports/latest`` (and ``exports/<date>``) must always see: a complete export — the
tables, the report beside them and a manifest that lists both — the previous one until the new one is
complete. The report is faked here (``quick_report``): the real one takes about 10 s to draw, and
tests/publish/test_report.py tests it."""

from __future__ import annotations

import json
import os
from datetime import date, datetime
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from pipelines import warehouse
from pipelines.assets.exports import exports_parquet, nightly_report
from pipelines.publish import exports as publish
from pipelines.publish import report
from pipelines.resources import WarehouseResource


def _warehouse(folder: Path, name: str = "w.duckdb") -> Path:
    wh = folder / name
    with warehouse.connect(wh) as con:
        warehouse.ensure_schema(con)
    return wh


def _materialize(assets, wh: Path, day: str) -> dg.ExecuteInProcessResult:
    return dg.materialize(assets, partition_key=day, resources={"warehouse_db": WarehouseResource(path=str(wh))},
                          raise_on_error=False)


def _shown(export: Path) -> tuple[str | None, str | None]:
    """What a reader of ``export`` sees: the manifest's date and the report's text (None: missing)."""
    manifest, page = export / "manifest.json", export / report.REPORT_FILE
    return (json.loads(manifest.read_text())["as_of"] if manifest.exists() else None,
            page.read_text() if page.exists() else None)


def _manifest(export: Path) -> dict:
    """``export``'s manifest, after checking that every file it lists is there as listed."""
    manifest = json.loads((export / "manifest.json").read_text())
    for entry in [*manifest["tables"].values(), *([manifest["report"]] if manifest["report"] else [])]:
        assert publish._sha256(export / entry["file"]) == entry["sha256"], entry["file"]
    return manifest


def _at(entry: dict) -> datetime:
    return datetime.fromisoformat(entry["generated_at"])


@pytest.fixture
def quick_report(monkeypatch):
    """report.write without the charts: a page naming its night. Returns what ``exports/latest`` showed
    each time a report was written."""
    monkeypatch.delenv("SCHOLARHOUSE_EXPORTS", raising=False)  # the exports beside the test's warehouse
    seen = []

    def write(data, folder, *, code_version=""):
        seen.append(_shown(folder.parent.parent / "latest"))  # folder: exports/.versions/<version>
        page = folder / report.REPORT_FILE
        page.write_text(f"report of {data.as_of}")
        return {"path": str(page), "bytes": page.stat().st_size, "charts": [], "pngs": {}}

    monkeypatch.setattr(report, "write", write)
    return seen


# --- publishing order ----------------------------------------------------------------------------


def test_latest_shows_the_previous_complete_export_until_the_new_report_is_beside_the_new_tables(tmp_path, quick_report):
    wh = _warehouse(tmp_path)
    for day in ("2026-11-21", "2026-11-22"):
        assert _materialize([exports_parquet, nightly_report], wh, day).success
    # while each night's report was being written, readers still saw the night before, complete
    assert quick_report == [(None, None), ("2026-11-21", "report of 2026-11-21")]
    latest = tmp_path / "exports" / "latest"
    assert _shown(latest) == ("2026-11-22", "report of 2026-11-22")
    assert os.path.samefile(latest, tmp_path / "exports" / "2026-11-22")
    listed = _manifest(latest)["report"]
    assert (listed["file"], listed["as_of"], listed["current"]) == (report.REPORT_FILE, "2026-11-22", True)
    assert not (tmp_path / "exports" / publish.STAGED / "2026-11-22").exists()


def test_a_report_that_fails_still_publishes_the_new_tables_beside_the_previous_report(tmp_path, quick_report,
                                                                                       monkeypatch):
    wh = _warehouse(tmp_path)
    assert _materialize([exports_parquet, nightly_report], wh, "2026-11-21").success

    def broken(data, folder, *, code_version=""):
        (folder / report.REPORT_FILE).write_text("half a page")
        raise ValueError("no charts tonight")

    monkeypatch.setattr(report, "write", broken)
    night = _materialize([exports_parquet, nightly_report], wh, "2026-11-22")
    assert not night.success  # the report step fails, visibly
    latest = tmp_path / "exports" / "latest"
    assert _shown(latest) == ("2026-11-22", "report of 2026-11-21")
    listed = _manifest(latest)["report"]
    assert (listed["as_of"], listed["current"]) == ("2026-11-21", False)
    assert "no charts tonight" in listed["reason"]


def test_re_running_the_report_or_the_tables_alone_publishes_a_complete_export(tmp_path, quick_report):
    wh, exports = _warehouse(tmp_path), tmp_path / "exports"
    for day in ("2026-11-21", "2026-11-22"):
        assert _materialize([exports_parquet, nightly_report], wh, day).success
    night_21 = _manifest(exports / "2026-11-21")

    # the report of an older night alone: a new version of that date, same tables; latest stays on the newer tables
    assert _materialize([nightly_report], wh, "2026-11-21").success
    again = _manifest(exports / "2026-11-21")
    assert again["tables"] == night_21["tables"] and again["generated_at"] == night_21["generated_at"]
    assert again["report"]["current"] and _at(again["report"]) >= _at(night_21["report"])
    assert _shown(exports / "latest") == ("2026-11-22", "report of 2026-11-22")

    # the tables alone: published at once (no report step follows), beside the date's report, said to be older
    tables = _materialize([exports_parquet], wh, "2026-11-22")
    assert tables.success
    [shown] = tables.get_asset_materialization_events()
    assert shown.materialization.metadata["published"].value is True
    manifest = _manifest(exports / "latest")
    assert _at(manifest) > _at(again)
    assert (manifest["report"]["as_of"], manifest["report"]["current"]) == ("2026-11-22", False)

    # then the report alone: the same tables, now with their own report
    assert _materialize([nightly_report], wh, "2026-11-22").success
    last = _manifest(exports / "latest")
    assert last["generated_at"] == manifest["generated_at"] and last["report"]["current"]


def test_tables_staged_before_the_latest_export_never_move_latest_back(tmp_path):
    """A run that died between its two steps leaves its tables staged; its report, re-run days later,
    publishes them under their date, but ``latest`` keeps the tables written last."""
    exports = tmp_path / "exports"

    def write(folder: Path) -> None:
        (folder / report.REPORT_FILE).write_text("a report")

    with warehouse.connect(tmp_path / "w.duckdb") as con:
        warehouse.ensure_schema(con)
        publish.export_tables(con, exports, date(2026, 11, 20))  # its report step never ran
        publish.export_tables(con, exports, date(2026, 11, 21))
        assert not (exports / "latest").exists()  # staged is not published
        publish.publish_export(exports, date(2026, 11, 21), write)
    publish.publish_export(exports, date(2026, 11, 20), write)
    assert _shown(exports / "2026-11-20") == ("2026-11-20", "a report")
    assert _shown(exports / "latest") == ("2026-11-21", "a report")
    # nothing is left staged, and a published version is never changed afterwards: each publish is a new one
    assert list((exports / publish.STAGED).iterdir()) == []
    assert len({os.path.realpath(exports / d) for d in ("2026-11-20", "2026-11-21")}) == 2


# --- paths ---------------------------------------------------------------------------------------


def test_a_quote_in_the_exports_path_is_no_sql_error(tmp_path):
    home = tmp_path / "o'neil"
    home.mkdir()
    with warehouse.connect(home / "w.duckdb") as con:
        warehouse.ensure_schema(con)
        con.execute("CREATE TABLE marts.night AS SELECT DATE '2026-11-21' AS as_of")
        publish.export_tables(con, home / "exports", date(2026, 11, 21))
    publish.publish_export(home / "exports", date(2026, 11, 21))
    manifest = _manifest(home / "exports" / "latest")
    assert manifest["report"] is None  # no report yet, and the manifest says so
    night = home / "exports" / "latest" / manifest["tables"]["marts.night"]["file"]
    assert duckdb.sql("SELECT count(*) FROM read_parquet(?)", params=[str(night)]).fetchall() == [(1,)]


def test_a_quote_in_the_warehouse_path_is_no_sql_error_for_the_analytics_copy(tmp_path):
    home = tmp_path / "o'neil"
    home.mkdir()
    wh = home / "scholar house-o'neil.duckdb"  # DuckDB names the database after the file
    with warehouse.connect(wh) as con:
        warehouse.ensure_schema(con)
        con.execute("PRAGMA disable_checkpoint_on_shutdown")  # leave a write-ahead log: the copy goes through DuckDB
        con.execute("CREATE TABLE marts.night AS SELECT DATE '2026-11-21' AS as_of")
    assert Path(f"{wh}.wal").exists()
    publish.publish_analytics_copy(wh, home / "analytics.duckdb")
    with duckdb.connect(str(home / "analytics.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM marts.night").fetchall() == [(1,)]
