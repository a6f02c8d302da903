"""The warehouse's own description of itself: every table of the contract with its columns, each
column with its type, nullability and meaning — read from the two places that already say it.

- **The DDL** (``sql/schema/*.sql``) says which tables and columns exist, their types and which are
  ``NOT NULL``; its ``--`` comments are the fallback meaning of a column.
- **The data dictionary** (``docs/warehouse.md``) says what each column means: the ``### `schema.table` ``
  section's column table (``| `column` | `TYPE` | nullable | meaning |``), and the table's grain
  (its ``**Grain:**`` paragraph).

One generator, no hand-kept copies: ``pipelines/assets/describe.py`` turns this into the
``dagster/column_schema`` of every asset at definition load, so a column added to the DDL (and the
dictionary) shows in the UI with the next code-location load. What the DDL has and the dictionary
lacks still shows, with the DDL comment (or nothing) as its description; ``undocumented`` lists it.

Plain Python, no Dagster imports; reads files only (the DDL and the dictionary), never the warehouse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SCHEMA_DIR = PROJECT_ROOT / "sql" / "schema"
DICTIONARY = PROJECT_ROOT / "docs" / "warehouse.md"

_CREATE_TABLE = re.compile(r"CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+\.\w+)\s*\((.*?)\n\s*\)\s*;", re.I | re.S)
_CONSTRAINT = re.compile(r"^(PRIMARY|UNIQUE|CONSTRAINT|CHECK|FOREIGN)\b", re.I)
_TYPE_END = re.compile(r"\s+(?:NOT\s+NULL|NULL|DEFAULT|PRIMARY|UNIQUE|CHECK|REFERENCES|USING\s+COMPRESSION)\b", re.I)
_TABLE_HEADING = re.compile(r"^(#{2,4})\s+`(\w+\.\w+)`\s*$")
_HEADING = re.compile(r"^(#{1,6})\s")
_GRAIN = re.compile(r"\*\*Grain:\*\*\s*(.*?)(?=\*\*[A-Z][\w ]*:\*\*|\n\s*\n|\Z)", re.S)


@dataclass(frozen=True)
class Column:
    name: str
    type: str              # as the DDL declares it (``VARCHAR[]``, ``STRUCT(...)[]``), upper case
    not_null: bool
    description: str       # the dictionary's meaning, else the DDL comment, else ""
    null_when: str = ""    # the dictionary's nullable cell after "yes:" (when the value is NULL)


@dataclass(frozen=True)
class Table:
    name: str                          # 'marts.author_metrics'
    columns: tuple[Column, ...]
    grain: str = ""                    # the dictionary's **Grain:** paragraph, one line
    undocumented: tuple[str, ...] = field(default=())  # DDL columns the dictionary does not describe

    @property
    def schema(self) -> str:
        return self.name.split(".", 1)[0]


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _definitions(body: str) -> list[tuple[str, str]]:
    """A CREATE TABLE body as ``[(column definition, comment)]``: the code split at the commas between
    definitions (not inside ``STRUCT(...)``), each with the ``--`` comments of the lines it starts on
    (``name TYPE, -- meaning`` is the usual layout: a comment after the comma is still its column's)."""
    definitions: list[list] = []  # [code, first line, last line]
    comments: list[str] = []
    depth, current, start = 0, [], None
    for number, line in enumerate(body.splitlines()):
        code, _, comment = line.partition("--")
        comments.append(comment.strip())
        for ch in code + "\n":
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            if ch == "," and depth == 0:
                definitions.append(["".join(current), start, number])
                current, start = [], None
                continue
            if start is None and not ch.isspace():
                start = number
            current.append(ch)
    definitions.append(["".join(current), start, len(comments) - 1])
    out = []
    for k, (code, first, last) in enumerate(definitions):
        if not code.strip():
            continue
        # the lines from where it starts to where the next definition starts (or its comma's line)
        following = definitions[k + 1][1] if k + 1 < len(definitions) and definitions[k + 1][1] is not None else last + 1
        span = range(first, max(following, first + 1))
        out.append((_one_line(code), _one_line(" ".join(comments[i] for i in span if i < len(comments) and comments[i]))))
    return out


def ddl_tables(schema_dir: Path = SCHEMA_DIR) -> dict[str, list[tuple[str, str, bool, str]]]:
    """``{"schema.table": [(column, type, not_null, ddl comment)]}`` from every ``*.sql`` file of
    ``schema_dir``, in file and column order."""
    tables: dict[str, list[tuple[str, str, bool, str]]] = {}
    for path in sorted(Path(schema_dir).glob("*.sql")):
        for name, body in _CREATE_TABLE.findall(path.read_text(encoding="utf-8")):
            columns = []
            for code, comment in _definitions(body):
                if _CONSTRAINT.match(code):
                    continue
                column, _, rest = code.partition(" ")
                column_type = _one_line(_TYPE_END.split(rest.strip(), 1)[0])
                not_null = bool(re.search(r"\bNOT\s+NULL\b", rest, re.I))
                columns.append((column, column_type, not_null, comment))
            tables[name] = columns
    return tables


def _cells(row: str) -> list[str]:
    """The cells of a markdown table row, splitting on ``|`` but not on an escaped ``\\|``."""
    inner = row.strip().strip("|")
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", inner)]


def _without_code_blocks(lines: list[str]) -> list[str]:
    out, fenced = [], False
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
            out.append("")
            continue
        out.append("" if fenced else line)
    return out


def dictionary_sections(text: str) -> dict[str, str]:
    """``{"schema.table": section text}`` for every dictionary heading that is a backticked table name."""
    lines = _without_code_blocks(text.splitlines())
    sections: dict[str, str] = {}
    for i, line in enumerate(lines):
        m = _TABLE_HEADING.match(line)
        if not m:
            continue
        level = len(m.group(1))
        end = next((j for j in range(i + 1, len(lines))
                    if (h := _HEADING.match(lines[j])) and len(h.group(1)) <= level), len(lines))
        if m.group(2) in sections:
            raise ValueError(f"docs/warehouse.md has two sections for {m.group(2)}")
        sections[m.group(2)] = "\n".join(lines[i + 1:end])
    return sections


def documented_columns(section: str) -> dict[str, tuple[str, str]]:
    """``{column: (nullable cell, meaning)}`` from a section's column table."""
    out: dict[str, tuple[str, str]] = {}
    for line in section.splitlines():
        if not line.strip().startswith("| `"):
            continue
        cells = _cells(line)
        if len(cells) < 4 or not re.fullmatch(r"`\w+`", cells[0]):
            continue
        out[cells[0].strip("`")] = (cells[2], " | ".join(cells[3:]))
    return out


def grain(section: str) -> str:
    m = _GRAIN.search(section)
    return _one_line(m.group(1)) if m else ""


def load(schema_dir: Path = SCHEMA_DIR, dictionary: Path = DICTIONARY) -> dict[str, Table]:
    """Every table the DDL creates, described: ``{"schema.table": Table}`` in DDL order."""
    sections = dictionary_sections(Path(dictionary).read_text(encoding="utf-8")) if Path(dictionary).exists() else {}
    tables: dict[str, Table] = {}
    for name, ddl_columns in ddl_tables(schema_dir).items():
        section = sections.get(name, "")
        documented = documented_columns(section)
        columns, missing = [], []
        for column, column_type, not_null, comment in ddl_columns:
            nullable_cell, meaning = documented.get(column, ("", ""))
            if not meaning:
                missing.append(column)
            null_when = ""
            if not not_null and nullable_cell.lower().startswith("yes"):
                null_when = nullable_cell[3:].lstrip(" :").strip()
            columns.append(Column(column, column_type, not_null, meaning or comment, null_when))
        tables[name] = Table(name, tuple(columns), grain(section), tuple(missing))
    return tables
