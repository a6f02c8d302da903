"""The docs point at the code in one hop: every warehouse table's section in docs/warehouse.md names
its modules and SQL files (paths that exist, the DDL file that creates it among them), and the
README's layout table matches the tree."""

from __future__ import annotations

import re
from pathlib import Path

from pipelines.warehouse import catalog
from pipelines.warehouse import contract

ROOT = Path(__file__).resolve().parents[1]
_CODE = re.compile(r"^\*\*Code:\*\*(.*)$", re.M)
_PATH = re.compile(r"`((?:pipelines|benchmarks|sql|docs|scripts|tests|expectations|config|warehouse)/[^`]*)`")


def _creates(table: str) -> str:
    """The DDL file that creates ``table``."""
    [path] = [p for p in sorted((ROOT / "sql" / "schema").glob("*.sql"))
              if re.search(rf"CREATE TABLE IF NOT EXISTS\s+{re.escape(table)}\s*\(", p.read_text())]
    return str(path.relative_to(ROOT))


def test_every_table_names_its_module_and_sql_files():
    sections = catalog.dictionary_sections((ROOT / "docs" / "warehouse.md").read_text(encoding="utf-8"))
    for table in contract.all_tables():
        lines = _CODE.findall(sections.get(table, ""))
        assert len(lines) == 1, f"docs/warehouse.md: {table} needs one **Code:** line"
        paths = _PATH.findall(lines[0])
        assert paths and paths[0].startswith("pipelines/assets/"), (table, "the asset module first")
        assert _creates(table) in paths, (table, "names the DDL file that creates it")
        for path in paths:
            assert (ROOT / path).exists(), (table, path)


def _layout_rows() -> list[tuple[str, str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("\n## Layout\n"):]
    section = section[:section.index("\n## ", 1)]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [tuple(c.strip() for c in line.strip().strip("|").split("|", 1)) for line in rows]


def test_the_readme_layout_table_matches_the_tree():
    rows = _layout_rows()
    listed = [p for path_cell, _ in rows for p in re.findall(r"`([^`]+)`", path_cell)]
    for path in listed:
        assert (ROOT / path).exists(), f"README layout: {path} does not exist"
    # every package under pipelines/ has its row
    packages = {f"pipelines/{p.parent.name}/" for p in (ROOT / "pipelines").glob("*/__init__.py")}
    assert packages <= set(listed), sorted(packages - set(listed))
    # every top-level module is named in the table
    named = {p for _, what in rows for p in _PATH.findall(what)} | set(listed)
    modules = {f"pipelines/{p.name}" for p in (ROOT / "pipelines").glob("*.py") if p.name != "__init__.py"}
    assert modules <= named, sorted(modules - named)
    # every top-level folder that is tracked is in it (hidden ones and the venv aside)
    folders = {f"{p.name}/" for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(".")
               and not p.name.endswith(".egg-info") and p.name not in ("bench_results", "__pycache__")}
    top = {p.split("/")[0] + "/" for p in listed}
    assert folders <= top, sorted(folders - top)
