"""Page source -> the visible text, line by line, plus which line each link sits on.

Uses only the standard library's ``html.parser``. The output imitates a browser's ``innerText``
closely enough that an HTML capture and a text capture of the same page parse to the same rows:

- inline elements glue (``<span>LG</span><time>Mar 18, 2023</time>`` -> ``LGMar 18, 2023``);
  block elements (div, p, li, h1-h6, section, article, br, tr, …) break lines; whitespace collapses;
- invisible or chrome content is dropped: script, style, noscript, template, svg, head, nav,
  ``aria-hidden="true"``, ``hidden``, inline ``display:none``, and the page-level header/footer
  (a ``<header>``/``<footer>`` outside main/article/section, or with role banner/contentinfo);
- entities are decoded;
- a ``<head>`` left unclosed ends where the body's first tag or text begins, as in a browser.

Links: instead of sentinel characters in the text, the walker records each ``<a href>`` against
the index of the output line where the anchor's first visible character landed (the line it
wraps, e.g. the title). An anchor with no visible text (an icon) is attached to the last line
written before it. The site parsers then give each link to the item whose line range holds it.

The walker also reports the canonical URL (``<link rel=canonical>`` / ``og:url``), the
``<title>`` and ``og:site_name`` (site detection hints), and whether the document was closed
(``</body>`` or ``</html>`` seen) — an unclosed document is a truncation signal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import urljoin

BLOCK_TAGS = frozenset(
    """address article aside blockquote body br caption center dd details dialog dir div dl dt
    fieldset figcaption figure footer form frameset h1 h2 h3 h4 h5 h6 header hgroup hr html legend
    li main menu nav ol p pre section summary table tbody tfoot thead tr ul option optgroup select
    textarea video audio picture iframe""".split()
)
SKIP_TAGS = frozenset("script style noscript template svg math head title iframe object canvas".split())
# Tags that never have content or an end tag.
VOID_TAGS = frozenset("area base br col embed hr img input link meta param source track wbr".split())
CELL_TAGS = frozenset({"td", "th"})
# What may sit in <head>: any other start tag (<body>, <div>...) or text closes an unclosed head, as
# in a browser (``</head>`` and even ``<head>`` are optional in HTML; minifiers drop them).
_HEAD_CONTENT = frozenset("title style script noscript template basefont bgsound noframes".split())
_LANDMARK_CONTAINERS = frozenset({"main", "article", "section", "aside"})
_COLLAPSIBLE = re.compile(r"[ \t\n\r\f]+")
_LINE_SPACES = re.compile(r"\s+")
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)


@dataclass
class HtmlDocument:
    lines: list[str]
    links: list[tuple[int, str]]          # (line index, href as written)
    canonical_url: str | None = None
    base_href: str | None = None
    title: str | None = None
    site_name: str | None = None
    closed: bool = False                  # </body> or </html> was seen

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


class _VisibleTextWalker(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.links: list[tuple[int, str]] = []
        self._buf: list[str] = []
        self._buf_has_text = False
        self._stack: list[tuple[str, bool]] = []   # (tag, starts a hidden region)
        self._hidden_depth = 0
        self._pre_depth = 0
        self._anchors: list[list] = []             # [href, line index or None]
        self._title_parts: list[str] | None = None
        self.title: str | None = None
        self.canonical_url: str | None = None
        self.og_url: str | None = None
        self.base_href: str | None = None
        self.site_name: str | None = None
        self.closed = False

    # -- output --------------------------------------------------------------------------
    def _break(self) -> None:
        if not self._buf_has_text:
            self._buf.clear()
            return
        line = " ".join("".join(self._buf).split())
        self._buf.clear()
        self._buf_has_text = False
        if line:
            self.lines.append(line)

    def _emit(self, text: str) -> None:
        if self._pre_depth:
            parts = text.split("\n")
            for i, part in enumerate(parts):
                if i:
                    self._break()
                self._emit_inline(part)
        else:
            self._emit_inline(_COLLAPSIBLE.sub(" ", text))

    def _emit_inline(self, text: str) -> None:
        if not text:
            return
        self._buf.append(text)
        if not text.isspace():
            if not self._buf_has_text:
                self._buf_has_text = True
            for anchor in self._anchors:
                if anchor[1] is None:
                    anchor[1] = len(self.lines)

    # -- structure -----------------------------------------------------------------------
    def _is_page_chrome(self, tag: str, attrs: dict[str, str | None]) -> bool:
        role = (attrs.get("role") or "").lower()
        if role in ("navigation", "banner", "contentinfo", "search"):
            return True
        if tag in ("header", "footer"):
            return not any(open_tag in _LANDMARK_CONTAINERS for open_tag, _ in self._stack)
        return False

    def handle_starttag(self, tag: str, attrs_list: list[tuple[str, str | None]]) -> None:
        attrs = {k.lower(): v for k, v in attrs_list}
        if tag == "meta":
            self._meta(attrs)
            return
        if tag == "link":
            rel = (attrs.get("rel") or "").lower().split()
            if "canonical" in rel and attrs.get("href"):
                self.canonical_url = self.canonical_url or attrs["href"].strip()
            return
        if tag == "base":
            if attrs.get("href"):
                self.base_href = self.base_href or attrs["href"].strip()
            return
        if tag not in _HEAD_CONTENT and self._stack and self._stack[-1][0] == "head":
            self.handle_endtag("head")
        if tag == "title" and self.title is None:
            self._title_parts = []
        if tag in VOID_TAGS:
            if tag in ("br", "hr") and not self._hidden_depth:
                self._break()
            return
        hides = (
            tag in SKIP_TAGS
            or tag == "nav"
            or (attrs.get("aria-hidden") or "").lower() == "true"
            or "hidden" in attrs
            or bool(attrs.get("style") and _HIDDEN_STYLE.search(attrs["style"] or ""))
            or self._is_page_chrome(tag, attrs)
        )
        self._stack.append((tag, hides))
        if hides:
            self._hidden_depth += 1
        if self._hidden_depth:
            return
        if tag in BLOCK_TAGS:
            self._break()
        elif tag in CELL_TAGS:
            self._emit_inline(" ")
        if tag == "pre":
            self._pre_depth += 1
        if tag == "a":
            self._anchors.append([attrs.get("href"), None])

    def handle_startendtag(self, tag: str, attrs_list: list[tuple[str, str | None]]) -> None:
        # <div/> is not self-closing in HTML, but treat XHTML-style void use as empty.
        self.handle_starttag(tag, attrs_list)
        if tag not in VOID_TAGS and tag not in ("meta", "link", "base"):
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("body", "html"):
            self.closed = True
        if tag == "title" and self._title_parts is not None:
            self.title = _LINE_SPACES.sub(" ", "".join(self._title_parts)).strip() or None
            self._title_parts = None
        if tag in VOID_TAGS:
            if tag == "br" and not self._hidden_depth:  # "</br>" is read as <br> by browsers
                self._break()
            return
        # Pop to the matching open tag; a stray end tag (no match) is ignored.
        for i in range(len(self._stack) - 1, -1, -1):
            if self._stack[i][0] == tag:
                break
        else:
            return
        while len(self._stack) > i:
            open_tag, hides = self._stack.pop()
            self._close(open_tag, hides)

    def _close(self, tag: str, hides: bool) -> None:
        visible = not self._hidden_depth
        if hides:
            self._hidden_depth -= 1
        if not visible:
            return
        if tag == "a" and self._anchors:
            href, line = self._anchors.pop()
            if href:
                if line is None:  # no visible text inside: attach to the line just written
                    line = len(self.lines) if self._buf_has_text else len(self.lines) - 1
                if line >= 0:
                    self.links.append((line, href.strip()))
        if tag == "pre" and self._pre_depth:
            self._pre_depth -= 1
        if tag in BLOCK_TAGS:
            self._break()
        elif tag in CELL_TAGS:
            self._emit_inline(" ")

    def handle_data(self, data: str) -> None:
        if self._title_parts is not None:
            self._title_parts.append(data)
        elif self._stack and self._stack[-1][0] == "head" and not data.isspace():
            self.handle_endtag("head")  # text cannot sit in <head>: it is the body's
        if self._hidden_depth:
            return
        self._emit(data)

    def _meta(self, attrs: dict[str, str | None]) -> None:
        key = (attrs.get("property") or attrs.get("name") or "").lower()
        content = (attrs.get("content") or "").strip()
        if not content:
            return
        if key == "og:url":
            self.og_url = self.og_url or content
        elif key in ("og:site_name", "application-name"):
            self.site_name = self.site_name or content

    def finish(self) -> HtmlDocument:
        self.close()
        canonical = self.canonical_url
        if canonical and "://" not in canonical and self.og_url and "://" in self.og_url:
            canonical = urljoin(self.og_url, canonical)  # a relative canonical, resolved by og:url
        while self._stack:
            tag, hides = self._stack.pop()
            self._close(tag, hides)
        self._break()
        return HtmlDocument(
            lines=self.lines,
            links=self.links,
            canonical_url=canonical or self.og_url,
            base_href=self.base_href,
            title=self.title,
            site_name=self.site_name,
            closed=self.closed,
        )


def html_to_document(html: str) -> HtmlDocument:
    """Walk the page source once: visible lines, links by line, canonical URL, closed flag."""
    walker = _VisibleTextWalker()
    walker.feed(html)
    return walker.finish()


def html_to_text(html: str) -> str:
    """The visible text of a page source, one block per line."""
    return html_to_document(html).text
