# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause
"""Convert the benchmark result files (a small subset of Markdown) to reST.

``benchmarks/results/*.md`` are written by the benchmark scripts: headings,
paragraphs, bullet lists and pipe tables, with inline code spans and emphasis.
:func:`markdown_to_rst` turns them into reST for the documentation, escaping
everything else that reST would interpret (stray ``*``, ``|``, trailing
underscores, backslashes), so that a results file can be regenerated without
breaking the documentation build. The docs' ``conf.py`` and ``tests/test_docs.py``
both use it.
"""

import re

__all__ = ["markdown_to_rst"]

HEADING_CHARS = "=-~^\"'"
_SEPARATOR = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_CODE = re.compile(r"(`+)(.+?)\1")
_STRONG = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*]+?)(?<=[^\s*])\*(?![\w*])")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


def _escape_text(text):
    """Escape reST markup characters in plain (non-code, non-emphasis) text."""
    text = text.replace("\\", "\\\\")
    text = re.sub(r"([*|`])", r"\\\1", text)
    # a word ending with "_" would be a hyperlink reference; "_word" a target
    text = re.sub(r"(?<=\w)_(?=\W|$)", r"\\_", text)
    text = re.sub(r"(?<![\w\\])_(?=\w)", r"\\_", text)
    return text


def _inline(text):
    """Convert the inline Markdown of ``text`` to reST."""
    pieces = []
    position = 0
    pattern = re.compile(
        "|".join(f"(?:{p.pattern})" for p in (_CODE, _STRONG, _EMPHASIS, _LINK))
    )
    for match in pattern.finditer(text):
        pieces.append(_escape_text(text[position : match.start()]))
        token = match.group(0)
        if token.startswith("`"):
            code = _CODE.fullmatch(token).group(2).strip()
            if not code or "``" in code:
                pieces.append(_escape_text(code))
                position = match.end()
                continue
            markup = f"``{code}``"
        elif token.startswith("**"):
            markup = f"**{_escape_text(_STRONG.fullmatch(token).group(1))}**"
        elif token.startswith("*"):
            markup = f"*{_escape_text(_EMPHASIS.fullmatch(token).group(1))}*"
        else:
            label, url = _LINK.fullmatch(token).groups()
            markup = f"`{_escape_text(label)} <{url}>`__"
        # inline markup must be delimited by whitespace or punctuation
        before = text[match.start() - 1] if match.start() > 0 else " "
        after = text[match.end()] if match.end() < len(text) else " "
        if before.isalnum():
            markup = "\\ " + markup
        if after.isalnum():
            markup = markup + "\\ "
        pieces.append(markup)
        position = match.end()
    pieces.append(_escape_text(text[position:]))
    return "".join(pieces)


def _cell(text):
    text = _inline(text.strip())
    if text == "" or text.startswith(("- ", "+ ", "* ")) or text in ("-", "+"):
        return "\\" + text if text else ""
    return text


def _split_row(line):
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    return re.split(r"(?<!\\)\|", line)


def _table(lines):
    header = _split_row(lines[0])
    rows = [_split_row(line) for line in lines[2:]]
    width = len(header)
    out = [".. list-table::", "   :header-rows: 1", ""]
    for row in [header, *rows]:
        row = (row + [""] * width)[:width]
        for j, cell in enumerate(row):
            bullet = "   * - " if j == 0 else "     - "
            out.append((bullet + _cell(cell)).rstrip())
    out.append("")
    return out


def markdown_to_rst(text, *, top_level=0):
    """Convert the Markdown of a benchmark result file to reST.

    Parameters
    ----------
    text : str
        The Markdown text.
    top_level : int, default=0
        Index in ``HEADING_CHARS`` of the underline used for ``#`` headings
        (``##`` uses the next one, and so on).

    Returns
    -------
    rst : str
    """
    lines = text.splitlines()
    out = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        heading = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", stripped)
        if heading:
            level = min(top_level + len(heading.group(1)) - 1, len(HEADING_CHARS) - 1)
            title = _inline(heading.group(2))
            out += ["", title, HEADING_CHARS[level] * max(len(title), 4), ""]
            i += 1
        elif (
            stripped.startswith("|")
            and i + 1 < len(lines)
            and _SEPARATOR.match(lines[i + 1].strip())
        ):
            block = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                block.append(lines[i])
                i += 1
            out += ["", *_table(block)]
        elif re.match(r"^([-*+]|\d+\.)\s+", stripped):
            item = re.match(r"^([-*+]|\d+\.)\s+(.*)$", stripped)
            marker = "-" if item.group(1) in "-*+" else "#."
            if out and out[-1] != "" and not re.match(r"^(-|#\.) ", out[-1]):
                if not out[-1].startswith("  "):
                    out.append("")
            out.append(f"{marker} {_inline(item.group(2))}")
            i += 1
            indent = " " * (len(marker) + 1)
            while (
                i < len(lines)
                and lines[i].strip()
                and lines[i].startswith(" ")
                and not re.match(r"^\s*([-*+]|\d+\.)\s+", lines[i])
            ):
                out.append(indent + _inline(lines[i].strip()))
                i += 1
        elif not stripped:
            out.append("")
            i += 1
        else:
            if out and out[-1] != "" and re.match(r"^(-|#\.) |\s", out[-1]):
                out.append("")
            out.append(_inline(stripped))
            i += 1
    text = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"
