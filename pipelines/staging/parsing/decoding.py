"""Bytes -> text, and text/plain vs text/html sniffing.

Order of trust, as a browser would: a byte-order mark, then strict UTF-8 (valid multi-byte UTF-8
almost never happens by accident), then a charset the server or the page declared, then cp1252 —
but only when the bytes look like text at all (no NULs, few control characters). Binary bodies
decode to ``(None, None)`` and become ``not_text`` rejects upstream.
"""

from __future__ import annotations

import codecs
import re

from pipelines.textnorm import HEADER_CHARSET, text_codec

# C0 controls other than tab/newline/carriage return/form feed, and DEL.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_CONTROL_BYTES = re.compile(rb"[\x00-\x08\x0b\x0e-\x1f\x7f]")
# Bytes cp1252 leaves undefined: seeing them means the body is not cp1252 text.
_HIGH_BYTES = re.compile(rb"[\x80-\xff]")
_CP1252_UNDEFINED = re.compile(rb"[\x81\x8d\x8f\x90\x9d]")
_META_CHARSET = re.compile(rb"""<meta[^>]{0,200}?charset\s*=\s*["']?([A-Za-z0-9_.:-]{1,40})""", re.IGNORECASE)
_HTML_START = re.compile(
    r"^\s*(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body|meta|title|link|script|div|main|section)\b",
    re.IGNORECASE | re.DOTALL,
)
_HTML_TAGS = re.compile(r"</(?:div|p|span|a|li|body|html|section|article|h[1-6])\s*>", re.IGNORECASE)

# A text body tolerates this share of stray control characters (1 per 200 chars, at least 2).
_MAX_CONTROL_SHARE = 0.005


def _too_many_controls(count: int, length: int) -> bool:
    return count > max(2, int(length * _MAX_CONTROL_SHARE))


def looks_binary(body: bytes) -> bool:
    """NUL bytes or a high share of control bytes: not a text document in any 8-bit codec."""
    if b"\x00" in body:
        return True
    return _too_many_controls(len(_CONTROL_BYTES.findall(body)), len(body))


def _text_ok(text: str) -> bool:
    return "\x00" not in text and not _too_many_controls(len(_CONTROL.findall(text)), len(text))


def _utf16_without_bom(body: bytes) -> str | None:
    """ASCII-heavy UTF-16 without a BOM has a NUL in every other byte."""
    if len(body) < 4 or len(body) % 2:
        return None
    sample = body[:2000]
    even_nuls = sample[0::2].count(0)
    odd_nuls = sample[1::2].count(0)
    half = len(sample) // 2
    if odd_nuls > 0.4 * half and even_nuls < 0.05 * half:
        return "utf-16-le"
    if even_nuls > 0.4 * half and odd_nuls < 0.05 * half:
        return "utf-16-be"
    return None


def _declared_charset(body: bytes, content_type: str | None) -> str | None:
    candidates = []
    if content_type:
        m = HEADER_CHARSET.search(content_type)
        if m:
            candidates.append(m.group(1))
    m = _META_CHARSET.search(body[:4096])
    if m:
        candidates.append(m.group(1).decode("ascii", "ignore"))
    for name in candidates:
        codec = text_codec(name)
        if codec and codec not in ("utf-8", "utf-16", "utf-16-le", "utf-16-be", "utf-32"):
            return codec
    return None


def decode_body(body: bytes, content_type: str | None = None) -> tuple[str | None, str | None]:
    """(text, encoding used) or (None, None) if the bytes are not text.

    UTF-8 (with/without BOM), UTF-16 with a BOM (or an unmistakable NUL pattern), then a declared
    non-UTF charset (``content_type``'s ``charset=`` or ``<meta charset>``), then cp1252 when the
    bytes look like text. Mostly-UTF-8 bytes with a few broken sequences decode as
    ``'utf-8-lossy'`` (U+FFFD for the broken bytes) rather than as cp1252 mojibake.
    """
    if not body:
        return "", "utf-8"
    if body.startswith(codecs.BOM_UTF8):
        encoding, payload = "utf-8-sig", body[3:]
        text = payload.decode("utf-8", "replace")
        return (text, encoding) if _text_ok(text) else (None, None)
    for bom, codec in ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
                       (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")):
        if body.startswith(bom):
            if codec.startswith("utf-32") and len(body) % 4:
                continue  # "\xff\xfe\x00\x00" may also be UTF-16-LE starting with a NUL
            text = body[len(bom):].decode(codec, "replace")
            return (text, codec) if _text_ok(text) else (None, None)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return (text, "utf-8") if _text_ok(text) else (None, None)
    utf16 = _utf16_without_bom(body)
    if utf16:
        text = body.decode(utf16, "replace")
        return (text, utf16) if _text_ok(text) else (None, None)
    if looks_binary(body):
        return None, None
    lossy = body.decode("utf-8", "replace")
    broken = lossy.count("\ufffd")
    ascii_count = len(body) - len(_HIGH_BYTES.findall(body))
    multibyte_ok = len(lossy) - broken - ascii_count
    if multibyte_ok > broken:  # mostly good UTF-8 with a few bad bytes
        return (lossy, "utf-8-lossy") if _text_ok(lossy) else (None, None)
    declared = _declared_charset(body, content_type)
    if declared:
        try:
            text = body.decode(declared)
        except (UnicodeError, LookupError, ValueError):  # a codec's own errors are not all UnicodeDecodeError
            pass
        else:
            if _text_ok(text):
                return text, declared
    undefined = len(_CP1252_UNDEFINED.findall(body))
    if _too_many_controls(undefined, len(body)):
        return None, None
    text = body.decode("cp1252", "replace")
    return (text, "cp1252") if _text_ok(text) else (None, None)


def _replacements(body: bytes, text: str, encoding: str) -> int:
    """How many U+FFFD the decoding put in for bytes that were not valid in ``encoding``."""
    if encoding == "cp1252":
        return len(_CP1252_UNDEFINED.findall(body))
    codec = "utf-8" if encoding.startswith("utf-8") else encoding
    try:
        genuine = body.count("\ufffd".encode(codec))
    except (LookupError, UnicodeError):
        genuine = 0
    return max(0, text.count("\ufffd") - genuine)


def decode_report(body: bytes, content_type: str | None = None) -> tuple[str | None, str | None, list[tuple[str, str, str]]]:
    """``decode_body`` plus what the decoding had to guess or repair, as ``(issue reason, action,
    detail)`` notes (``staging.quality_issues``):

    - ``nul_padding``: bytes that decode only once the NUL bytes padding their end are dropped (a
      file preallocated, or cut by a crash) — the padding is dropped;
    - ``encoding_guessed``: not UTF-8 and no charset declared: decoded as cp1252, a guess;
    - ``invalid_bytes``: bytes not valid in the encoding were replaced by U+FFFD.
    """
    notes: list[tuple[str, str, str]] = []
    text, encoding = decode_body(body, content_type)
    if text is None:
        stripped = body.rstrip(b"\x00")
        if stripped and len(stripped) < len(body) and b"\x00" not in stripped:
            text, encoding = decode_body(stripped, content_type)
            if text is not None:
                notes.append(("nul_padding", "repaired",
                              f"{len(body) - len(stripped):,} NUL bytes padding the end of the body were dropped"))
                body = stripped
        if text is None:
            return None, None, notes
    if encoding == "cp1252":
        high = len(_HIGH_BYTES.findall(body))
        notes.append(("encoding_guessed", "kept", f"not valid UTF-8 and no charset declared: decoded as cp1252 "
                                                  f"({high:,} bytes outside ASCII; accented letters may be wrong)"))
    replaced = _replacements(body, text, encoding)
    if replaced:
        notes.append(("invalid_bytes", "repaired",
                      f"{replaced:,} byte sequence(s) not valid {encoding.removesuffix('-lossy')} were replaced by U+FFFD"))
    return text, encoding, notes


def sniff_content_type(text: str, declared: str | None = None) -> str:
    """'text/html' or 'text/plain': the declared type when it says html/plain — unless the content
    contradicts it (a "text/plain" body that starts as an HTML document, an "html" body without a
    single ``<``: a saved page with the wrong file extension) — else the content."""
    if declared:
        mime = declared.split(";", 1)[0].strip().lower()
        if mime in ("text/html", "application/xhtml+xml"):
            return "text/html" if "<" in text[:65536] else "text/plain"
        if mime == "text/plain":
            return "text/html" if _HTML_START.match(text[:4096]) else "text/plain"
    head = text[:4096]
    if _HTML_START.match(head):
        return "text/html"
    if "<" in head and len(_HTML_TAGS.findall(head)) >= 3:
        return "text/html"
    return "text/plain"
