"""The captures-folder source: every file is a page; sidecars give url and capture time."""

import json
from datetime import date, datetime, timezone

import pytest

from pipelines.ingest.sources.folder import FolderSource

DAY = date(2026, 11, 22)


def test_bundled_samples_have_sidecars(samples_dir):
    caps = list(FolderSource(samples_dir).iter_captures(DAY))
    assert len(caps) == 5
    assert {c.captured_at for c in caps} == {datetime(2026, 11, 21, tzinfo=timezone.utc)}
    assert all(c.content_type == "text/plain" for c in caps)
    # the pages' own URLs, never this clone's file paths (they would land in raw, the marts and the exports)
    assert sorted(c.url for c in caps) == [
        "https://www.bzpeer.com/authors/daning-cheng", "https://www.bzpeer.com/authors/yunquan-zhang",
        "https://www.scholarfeed.org/author/1000001", "https://www.scholarfeed.org/author/1000002",
        "https://www.scholarfeed.org/author/1000003"]
    assert not any(c.issues for c in caps)


def test_defaults_without_sidecar_and_html_content_type(tmp_path):
    (tmp_path / "page.html").write_text("<html><body>x</body></html>")
    (tmp_path / "page.txt").write_text("hello")
    caps = {c.source_file: c for c in FolderSource(tmp_path).iter_captures(DAY)}
    assert caps["page.html"].content_type == "text/html"
    assert caps["page.txt"].captured_at == datetime(2026, 11, 22, tzinfo=timezone.utc)
    assert caps["page.txt"].url == (tmp_path / "page.txt").resolve().as_uri()


def test_sidecar_url_and_time_win(tmp_path):
    (tmp_path / "p.txt").write_text("x")
    (tmp_path / "p.txt.meta.json").write_text(json.dumps(
        {"url": "https://www.scholarfeed.org/author/42", "captured_at": "2026-03-01T10:00:00Z"}))
    (cap,) = FolderSource(tmp_path).iter_captures(DAY)
    assert cap.url == "https://www.scholarfeed.org/author/42"
    assert cap.captured_at == datetime(2026, 3, 1, 10, tzinfo=timezone.utc)


def test_broken_sidecar_is_reported_not_fatal(tmp_path):
    (tmp_path / "p.txt").write_text("x")
    (tmp_path / "p.txt.meta.json").write_text("{not json")
    source = FolderSource(tmp_path)
    (cap,) = source.iter_captures(DAY)
    assert cap.captured_at.date() == DAY and source.warnings


def test_hidden_files_and_sidecars_are_not_pages(tmp_path):
    (tmp_path / ".DS_Store").write_bytes(b"\0\1")
    (tmp_path / "orphan.txt.meta.json").write_text("{}")
    assert list(FolderSource(tmp_path).iter_captures(DAY)) == []


def test_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="captures folder not found"):
        list(FolderSource(tmp_path / "nope").iter_captures(DAY))


def test_capture_id_is_the_body_hash(tmp_path):
    (tmp_path / "a.txt").write_text("same")
    (tmp_path / "b.txt").write_text("same")
    a, b = FolderSource(tmp_path).iter_captures(DAY)
    assert a.capture_id == b.capture_id and len(a.capture_id) == 64
