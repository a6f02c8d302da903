"""The document model the synthetic pages are built as: block lines (a tag and inline parts),
blank-line markers and wrapper open/close tags, serialised as visible text (``TextDoc``, and
``Doc.to_text``) or as the HTML of ``<main>`` (``Doc.to_html``) — one document, so the HTML's visible
text equals the text variant (``render.py`` explains the ``innerText`` rules this keeps). Each
serialisation also gives every listed item's span, for the truth tables.
"""

from __future__ import annotations

import html

_OPEN, _CLOSE, _LINE, _BLANK, _ITEM_START, _ITEM_END = range(6)


def esc(text: str) -> str:
    return html.escape(text, quote=False)


def attr(text: str) -> str:
    return html.escape(text, quote=True)


class Doc:
    """Blocks with inline parts; serialises to visible text or to HTML with the same text.

    A part is a pair (html, text). A text-only document (``html=False``) skips building the HTML
    half (None), which is most of the cost of a page.
    """

    __slots__ = ("tokens", "html")

    def __init__(self, html: bool) -> None:
        self.tokens: list[tuple] = []
        self.html = html

    def span(self, cls: str, text: str, tag: str = "span") -> tuple[str | None, str]:
        return (f'<{tag} class="{cls}">{esc(text)}</{tag}>' if self.html else None), text

    def plain(self, text: str) -> tuple[str | None, str]:
        return (esc(text) if self.html else None), text

    def link(self, href: str | None, text: str, cls: str = "") -> tuple[str | None, str]:
        """An inline link; ``href`` may be None for a text-only document."""
        if not self.html:
            return None, text
        c = f' class="{cls}"' if cls else ""
        return f'<a{c} href="{attr(href or "")}">{esc(text)}</a>', text

    def open(self, tag_html: str) -> None:
        self.tokens.append((_OPEN, tag_html))

    def close(self, tag_html: str) -> None:
        self.tokens.append((_CLOSE, tag_html))

    def line(self, tag: str, attrs: str, parts, gap: bool = False) -> None:
        """A block line; ``gap``: a blank line follows (paragraph spacing)."""
        if isinstance(parts, str):
            parts = (self.plain(parts),)
        elif not isinstance(parts[0], tuple):   # a single (html, text) pair
            parts = (parts,)
        self.tokens.append((_LINE, tag, attrs, parts))
        if gap:
            self.tokens.append((_BLANK,))

    def blank(self) -> None:
        self.tokens.append((_BLANK,))

    def item_start(self) -> None:
        self.tokens.append((_ITEM_START,))

    def item_end(self) -> None:
        self.tokens.append((_ITEM_END,))

    def to_html(self) -> tuple[str, list[tuple[int, int]]]:
        """The ``<main>`` inner HTML and the character span of every item within it."""
        out: list[str] = []
        pos = 0
        spans: list[tuple[int, int]] = []
        start = 0
        for tok in self.tokens:
            kind = tok[0]
            if kind == _LINE:
                _, tag, attrs, parts = tok
                frag = f"<{tag}{attrs}>" + "".join(p[0] for p in parts) + f"</{tag}>"
            elif kind == _OPEN or kind == _CLOSE:
                frag = tok[1]
            elif kind == _ITEM_START:
                start = pos
                continue
            elif kind == _ITEM_END:
                spans.append((start, pos))
                continue
            else:
                continue
            out.append(frag)
            pos += len(frag) + 1
        return "\n".join(out), spans


class TextDoc:
    """The text-only twin of ``Doc``: same interface, keeps only the visible lines (fast path)."""

    __slots__ = ("lines", "items", "_start")
    html = False

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.items: list[tuple[int, int]] = []   # (first line, end line) of every item
        self._start = 0

    @staticmethod
    def span(cls: str, text: str, tag: str = "span") -> tuple[None, str]:
        return None, text

    @staticmethod
    def plain(text: str) -> tuple[None, str]:
        return None, text

    @staticmethod
    def link(href: str | None, text: str, cls: str = "") -> tuple[None, str]:
        return None, text

    def open(self, tag_html: str) -> None:
        pass

    close = open

    def line(self, tag: str, attrs: str, parts, gap: bool = False) -> None:
        if isinstance(parts, str):
            self.lines.append(parts)
        elif not isinstance(parts[0], tuple):
            self.lines.append(parts[1])
        else:
            self.lines.append("".join([p[1] for p in parts]))
        if gap:
            self.lines.append("")

    def blank(self) -> None:
        self.lines.append("")

    def item_start(self) -> None:
        self._start = len(self.lines)

    def item_end(self) -> None:
        self.items.append((self._start, len(self.lines)))

    def to_text(self) -> tuple[str, list[tuple[int, int]]]:
        """Visible text and the (start, end) character span of every item."""
        offsets = [0]
        for text in self.lines:
            offsets.append(offsets[-1] + len(text) + 1)
        spans = [(offsets[a], offsets[b] - 1) for a, b in self.items]
        return "\n".join(self.lines), spans


def new_doc(html: bool):
    """A document builder: ``Doc`` (HTML and text) for HTML pages, ``TextDoc`` for text pages."""
    return Doc(True) if html else TextDoc()
