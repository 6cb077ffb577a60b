#!/usr/bin/env python3
"""Markdown to man(7) roff: dnsmoat's man page is generated from the same Markdown as docs/.

    markdown_to_man.py PAGE.md --output dnsmoat.8 [--version V] [--date YYYY-MM-DD]
                       [--depfile FILE]

PAGE.md is a page skeleton: its `#` headings become the page's sections (.SH); the line

    <!-- include: FILE [section="Heading"] [exclude="Heading"] -->

inserts another Markdown file (path relative to PAGE.md): the whole file without its `#` title,
or only the content under the heading `section`, leaving out the sections named by `exclude`
(both may be repeated). The first `#` heading of PAGE.md names the page: `# dnsmoat(8)`.

The Markdown the docs use is understood: ATX headings, paragraphs, bullet and numbered lists
(nested, with paragraphs and code blocks inside items), fenced code blocks, GitHub tables,
block quotes, inline code, bold, italics, links and images, backslash escapes, HTML comments.
Headings map to .SH (level 1) and .SS (deeper; man has two levels). Tables become tagged
paragraphs (.TP): the first column is the tag, the middle columns a "header: value" line and
the last one the text (labelled too unless it is the "meaning" or "description"), which reads
well on an 80-column terminal where a four-column table would not. Link targets are dropped
from the text; web addresses are listed in a NOTES section under their link text. Roff's
special characters are escaped: backslashes, a dot or apostrophe starting a line, hyphens in
code and options (\\-, so that a copied option is typed right), quotes, ^ and ~ in code, and
every non-ASCII character (as \\[uXXXX], for groff without preconv).

Standard library only (python3 is a build dependency; nothing else is).
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import os
import re
import sys
from pathlib import Path

# --- block structure ---------------------------------------------------------------------------


@dataclasses.dataclass
class Heading:
    level: int
    text: str


@dataclasses.dataclass
class Paragraph:
    text: str


@dataclasses.dataclass
class Code:
    lang: str
    lines: list[str]


@dataclasses.dataclass
class ListBlock:
    ordered: bool
    start: int
    items: list[list]  # each item: a list of blocks


@dataclasses.dataclass
class Table:
    header: list[str]
    rows: list[list[str]]


@dataclasses.dataclass
class Quote:
    blocks: list


@dataclasses.dataclass
class Include:
    path: str
    sections: list[str]
    excludes: list[str]
    line: int


FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\s*(?P<lang>[^`\s]*)[^`]*$")
HEADING = re.compile(r"^ {0,3}(?P<hashes>#{1,6})(?:[ \t]+(?P<text>.*?))?(?:[ \t]+#+)?[ \t]*$")
BULLET = re.compile(r"^(?P<indent> {0,3})(?P<marker>[-*+])(?P<space>[ \t]+|$)(?P<rest>.*)$")
ORDERED = re.compile(r"^(?P<indent> {0,3})(?P<number>\d{1,9})(?P<delim>[.)])(?P<space>[ \t]+|$)"
                     r"(?P<rest>.*)$")
TABLE_DELIMITER = re.compile(r"^ {0,3}\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
RULE = re.compile(r"^ {0,3}((\*\s*){3,}|(-\s*){3,}|(_\s*){3,})$")
INCLUDE = re.compile(r"^\s*<!--\s*include:\s*(?P<args>.*?)\s*-->\s*$")
INCLUDE_OPTION = re.compile(r'(?P<key>section|exclude)="(?P<value>[^"]*)"')


class MarkdownError(Exception):
    pass


def split_table_row(line: str) -> list[str]:
    """Cells of a table row; `\\|` is a pipe inside a cell (also inside code spans)."""
    text = line.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|") and not text.endswith("\\|"):
        text = text[:-1]
    cells, cell, i = [], [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text) and text[i + 1] == "|":
            cell.append("|")
            i += 2
            continue
        if text[i] == "|":
            cells.append("".join(cell).strip())
            cell = []
        else:
            cell.append(text[i])
        i += 1
    cells.append("".join(cell).strip())
    return cells


def list_marker(line: str):
    """(ordered, number, content indent, first line) when `line` starts a list item."""
    m = BULLET.match(line)
    if m and not RULE.match(line):
        indent = len(m["indent"]) + 1 + max(1, len(m["space"]) if len(m["space"]) <= 4 else 1)
        return False, 0, indent, m["rest"]
    m = ORDERED.match(line)
    if m:
        space = len(m["space"]) if len(m["space"]) <= 4 else 1
        indent = len(m["indent"]) + len(m["number"]) + 1 + max(1, space)
        return True, int(m["number"]), indent, m["rest"]
    return None


def starts_block(line: str, in_paragraph: bool) -> bool:
    """Whether `line` ends a running paragraph by starting a block of its own."""
    if HEADING.match(line) or FENCE.match(line) or line.lstrip().startswith(">"):
        return True
    if line.lstrip().startswith("<!--") or RULE.match(line):
        return True
    marker = list_marker(line)
    if marker and marker[3].strip():
        # CommonMark: only a numbered list starting at 1 may interrupt a paragraph.
        return not in_paragraph or not marker[0] or marker[1] == 1
    return False


def parse_blocks(lines: list[str], first_line: int = 1) -> list:
    """Block structure of `lines` (tabs already expanded)."""
    blocks: list = []
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        # Fenced code block.
        m = FENCE.match(line)
        if m:
            fence, indent = m["fence"], len(m["indent"])
            body = []
            i += 1
            while i < n:
                close = lines[i].strip()
                if close.startswith(fence[0] * len(fence)) and set(close) <= {fence[0]}:
                    i += 1
                    break
                text = lines[i]
                strip = min(indent, len(text) - len(text.lstrip(" ")))
                body.append(text[strip:])
                i += 1
            else:
                raise MarkdownError(f"line {first_line + i}: unclosed code fence {fence}")
            blocks.append(Code(m["lang"], body))
            continue
        # HTML comment: an include directive, or dropped.
        if line.lstrip().startswith("<!--"):
            inc = INCLUDE.match(line)
            if inc:
                args = inc["args"]
                options = INCLUDE_OPTION.findall(args)
                path = INCLUDE_OPTION.sub("", args).strip()
                blocks.append(Include(path, [v for k, v in options if k == "section"],
                                      [v for k, v in options if k == "exclude"], first_line + i))
                i += 1
                continue
            while i < n and "-->" not in lines[i]:
                i += 1
            i += 1
            continue
        m = HEADING.match(line)
        if m:
            blocks.append(Heading(len(m["hashes"]), (m["text"] or "").strip()))
            i += 1
            continue
        if RULE.match(line):
            i += 1
            continue
        # Table: a row, then the delimiter row.
        if "|" in line and i + 1 < n and TABLE_DELIMITER.match(lines[i + 1]) \
                and "-" in lines[i + 1]:
            header = split_table_row(line)
            rows = []
            i += 2
            while i < n and lines[i].strip() and "|" in lines[i]:
                cells = split_table_row(lines[i])
                cells = (cells + [""] * len(header))[:len(header)]
                rows.append(cells)
                i += 1
            blocks.append(Table(header, rows))
            continue
        # Block quote.
        if line.lstrip().startswith(">"):
            body = []
            while i < n and lines[i].strip() and lines[i].lstrip().startswith(">"):
                text = lines[i].lstrip()[1:]
                body.append(text[1:] if text.startswith(" ") else text)
                i += 1
            blocks.append(Quote(parse_blocks(body, first_line + i)))
            continue
        # List: items of one kind, each with the lines indented under it.
        marker = list_marker(line)
        if marker:
            ordered, start = marker[0], marker[1]
            items = []
            while i < n:
                marker = list_marker(lines[i])
                if not marker or marker[0] != ordered:
                    break
                indent = marker[2]
                item_lines = [marker[3]]
                item_start = first_line + i
                i += 1
                while i < n:
                    text = lines[i]
                    if not text.strip():
                        # A blank line: the item goes on if the next line is indented under it.
                        j = i
                        while j < n and not lines[j].strip():
                            j += 1
                        if j < n and len(lines[j]) - len(lines[j].lstrip(" ")) >= indent:
                            item_lines.extend([""] * (j - i))
                            i = j
                            continue
                        break
                    lead = len(text) - len(text.lstrip(" "))
                    if lead >= indent:
                        item_lines.append(text[indent:])
                        i += 1
                        continue
                    # A lazy continuation line of the item's paragraph.
                    if item_lines[-1].strip() and not starts_block(text, True) \
                            and not list_marker(text) and "|" not in text:
                        item_lines.append(text.strip())
                        i += 1
                        continue
                    break
                items.append(parse_blocks(item_lines, item_start))
                # Blank lines between items keep the list going.
                j = i
                while j < n and not lines[j].strip():
                    j += 1
                if j < n and j > i:
                    nxt = list_marker(lines[j])
                    if nxt and nxt[0] == ordered:
                        i = j
            blocks.append(ListBlock(ordered, start, items))
            continue
        # Paragraph.
        body = [line.strip()]
        i += 1
        while i < n and lines[i].strip() and not starts_block(lines[i], True):
            if "|" in lines[i] and i + 1 < n and TABLE_DELIMITER.match(lines[i + 1]):
                break
            body.append(lines[i].strip())
            i += 1
        blocks.append(Paragraph(" ".join(body)))
    return blocks


def read_markdown(path: Path) -> list[str]:
    return [line.expandtabs(4) for line in path.read_text(encoding="utf-8").splitlines()]


def heading_plain(text: str) -> str:
    return plain_text(parse_inline(text)).strip()


def select_sections(blocks: list, sections: list[str], excludes: list[str], where: str) -> list:
    """The blocks under each heading of `sections` (all blocks when none), minus `excludes`."""
    def ranges(names):
        found = {}
        for name in names:
            for k, b in enumerate(blocks):
                if isinstance(b, Heading) and heading_plain(b.text) == name:
                    end = k + 1
                    while end < len(blocks) and not (isinstance(blocks[end], Heading)
                                                     and blocks[end].level <= b.level):
                        end += 1
                    found[name] = (k, end)
                    break
            else:
                raise MarkdownError(f"{where}: no heading \"{name}\"")
        return found

    if sections:
        chosen = []
        for start, end in ranges(sections).values():
            chosen.extend(blocks[start + 1:end])
    else:
        chosen = list(blocks)
        # A whole file: its title goes (the skeleton's heading names the section).
        if chosen and isinstance(chosen[0], Heading) and chosen[0].level == 1:
            chosen = chosen[1:]
    if excludes:
        drop = set()
        for start, end in ranges(excludes).values():
            drop.update(id(b) for b in blocks[start:end])
        chosen = [b for b in chosen if id(b) not in drop]
    return chosen


def expand_includes(blocks: list, base: Path, used: list[Path], depth: int = 0) -> list:
    out = []
    for b in blocks:
        if not isinstance(b, Include):
            out.append(b)
            continue
        if depth > 8:
            raise MarkdownError(f"{base}: includes nested too deeply")
        path = (base / b.path).resolve()
        if not path.is_file():
            raise MarkdownError(f"{base}:{b.line}: cannot include {b.path}: no such file")
        used.append(path)
        inner = parse_blocks(read_markdown(path))
        inner = select_sections(inner, b.sections, b.excludes, f"{path}")
        out.extend(expand_includes(inner, path.parent, used, depth + 1))
    return out


# --- inline structure --------------------------------------------------------------------------

PUNCTUATION = set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def skip_escape_or_code(s: str, i: int) -> int | None:
    """Past a backslash escape or a whole code span starting at `i`; None when neither starts
    there (an unclosed run of backticks is plain text)."""
    if s[i] == "\\":
        return i + 2
    if s[i] == "`":
        run = len(s[i:]) - len(s[i:].lstrip("`"))
        close = s.find("`" * run, i + run)
        if close >= 0:
            return close + run
    return None


def find_closing(s: str, start: int, delim: str) -> int:
    """Index of the closing `delim` for emphasis opened before `start`, or -1."""
    i = start
    while i < len(s):
        skipped = skip_escape_or_code(s, i)
        if skipped is not None:
            i = skipped
            continue
        if s.startswith(delim, i) and i > start and not s[i - 1].isspace():
            after = s[i + len(delim):i + len(delim) + 1]
            if len(delim) == 1 and after == delim:  # part of a ** run: not ours
                i += 2
                continue
            if delim[0] == "_" and after and after.isalnum():
                i += 1
                continue
            return i
        i += 1
    return -1


def find_bracket_end(s: str, start: int) -> int:
    """Index of the `]` matching the `[` at `start`, skipping code spans and escapes."""
    depth, i = 0, start
    while i < len(s):
        skipped = skip_escape_or_code(s, i)
        if skipped is not None:
            i = skipped
            continue
        c = s[i]
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def parse_inline(s: str) -> list:
    """Inline nodes: ("text", str), ("code", str), ("strong", nodes), ("em", nodes),
    ("link", nodes, url), ("break",)."""
    nodes: list = []
    buf: list[str] = []

    def flush():
        if buf:
            nodes.append(("text", "".join(buf)))
            buf.clear()

    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s) and s[i + 1] in PUNCTUATION:
            buf.append(s[i + 1])
            i += 2
            continue
        if c == "`":
            run = len(s[i:]) - len(s[i:].lstrip("`"))
            close = s.find("`" * run, i + run)
            while close >= 0 and s[close + run:close + run + 1] == "`":
                close = s.find("`" * run, close + run + 1)
            if close < 0:
                buf.append("`" * run)
                i += run
                continue
            code = s[i + run:close]
            if len(code) > 2 and code[0] == " " and code[-1] == " " and code.strip():
                code = code[1:-1]
            flush()
            nodes.append(("code", code))
            i = close + run
            continue
        if c == "!" and s.startswith("![", i):
            end = find_bracket_end(s, i + 1)
            if end > 0 and s[end + 1:end + 2] == "(":
                close = s.find(")", end + 2)
                if close > 0:
                    flush()
                    nodes.extend(parse_inline(s[i + 2:end]))
                    i = close + 1
                    continue
        if c == "[":
            end = find_bracket_end(s, i)
            if end > 0 and s[end + 1:end + 2] == "(":
                depth, close = 0, -1
                for k in range(end + 1, len(s)):
                    if s[k] == "(":
                        depth += 1
                    elif s[k] == ")":
                        depth -= 1
                        if depth == 0:
                            close = k
                            break
                if close > 0:
                    target = s[end + 2:close].strip()
                    url = target.split()[0].strip("<>") if target else ""
                    flush()
                    nodes.append(("link", parse_inline(s[i + 1:end]), url))
                    i = close + 1
                    continue
        if c == "<":
            m = re.match(r"<((?:https?|mailto):[^<>\s]+)>", s[i:])
            if m:
                flush()
                nodes.append(("link", [("text", m[1])], m[1]))
                i += m.end()
                continue
        if c in "*_":
            delim = c * 2 if s.startswith(c * 2, i) else c
            before = s[i - 1] if i else " "
            after = s[i + len(delim):i + len(delim) + 1]
            opens = after and not after.isspace() and after != c
            if c == "_" and before.isalnum():
                opens = False
            if opens:
                close = find_closing(s, i + len(delim), delim)
                if close > 0:
                    flush()
                    inner = parse_inline(s[i + len(delim):close])
                    nodes.append(("strong" if len(delim) == 2 else "em", inner))
                    i = close + len(delim)
                    continue
            buf.append(delim)
            i += len(delim)
            continue
        buf.append(c)
        i += 1
    flush()
    return nodes


def plain_text(nodes: list) -> str:
    """The text a reader sees, without markup (links keep their text)."""
    out = []
    for node in nodes:
        kind = node[0]
        if kind in ("text", "code"):
            out.append(node[1])
        elif kind in ("strong", "em"):
            out.append(plain_text(node[1]))
        elif kind == "link":
            out.append(plain_text(node[1]))
    return "".join(out)


# --- roff output -------------------------------------------------------------------------------


def escape_char(c: str) -> str:
    if c == "\\":
        return "\\e"
    if ord(c) < 128:
        return c
    if c == "\u00a0":
        return "\\ "
    return f"\\[u{ord(c):04X}]"


def escape_literal(text: str, breakable: bool = False) -> str:
    """Code: every character as typed (ASCII hyphen, quote, grave, caret, tilde). `breakable`:
    a long word may break after / . _ : = , - (roff's \\: break point, no hyphen shown), so a
    path or URL wider than the page does not overflow it."""
    special = {"-": "\\-", "'": "\\(aq", "`": "\\(ga", "^": "\\(ha", "~": "\\(ti"}
    out = []
    run = 0  # characters since the last space
    for c in text:
        out.append(special.get(c, escape_char(c)))
        run = 0 if c == " " else run + 1
        if breakable and run >= 20 and c in "/._:=,-":
            out.append("\\:")
    return "".join(out)


OPTION_HYPHENS = re.compile(r"(?<![\w\-\\])(-{1,2})(?=[A-Za-z0-9])")


def escape_text(text: str) -> str:
    """Prose: hyphens stay hyphens, except the ones that start an option (--config)."""
    out = "".join(escape_char(c) for c in text)
    return OPTION_HYPHENS.sub(lambda m: "\\-" * len(m[1]), out)


SENTENCE_END = re.compile(r"[.?!][)\]\"'*]*(\\f[RBIP]|\\f\(BI)?$")

FONTS = {(False, False): "\\fR", (True, False): "\\fB", (False, True): "\\fI",
         (True, True): "\\f(BI"}


class Renderer:
    def __init__(self):
        self.out: list[str] = []
        self.notes: list[tuple[str, str]] = []
        self.section = ""

    # Inline ---------------------------------------------------------------------------------
    def inline(self, nodes: list, bold=False, italic=False) -> str:
        parts = []
        for node in nodes:
            kind = node[0]
            if kind == "text":
                parts.append(escape_text(node[1]))
            elif kind == "code":
                code = escape_literal(node[1], breakable=True)
                parts.append(code if bold else FONTS[True, italic] + code + FONTS[bold, italic])
            elif kind == "strong":
                parts.append(FONTS[True, italic] + self.inline(node[1], True, italic)
                             + FONTS[bold, italic])
            elif kind == "em":
                parts.append(FONTS[bold, True] + self.inline(node[1], bold, True)
                             + FONTS[bold, italic])
            elif kind == "link":
                parts.append(self.inline(node[1], bold, italic))
                url = node[2]
                if re.match(r"(https?|ftp)://", url):
                    label = plain_text(node[1]).strip() or url
                    if (label, url) not in self.notes:
                        self.notes.append((label, url))
        return "".join(parts)

    def text(self, markdown: str) -> str:
        roff = self.inline(parse_inline(markdown))
        if self.section == "NAME":
            roff = roff.replace(" - ", " \\- ", 1)
        return roff

    def emit_text(self, roff: str):
        """Filled text, wrapped at spaces; no line may start with a control character."""
        roff = re.sub(r"[ \t]+", " ", roff).strip()
        width = 78
        while roff:
            if len(roff) <= width:
                line, roff = roff, ""
            else:
                cut = roff.rfind(" ", 0, width)
                if cut <= 0:
                    cut = roff.find(" ", width)
                if cut <= 0:
                    line, roff = roff, ""
                else:
                    line, roff = roff[:cut], roff[cut + 1:]
            # A trailing backslash would escape the newline; keep it with the next word.
            while line.endswith("\\") and not line.endswith("\\\\") and roff:
                nxt = roff.find(" ")
                nxt = len(roff) if nxt < 0 else nxt
                line, roff = line + " " + roff[:nxt], roff[nxt + 1:]
            if line[:1] in (".", "'"):
                line = "\\&" + line
            if SENTENCE_END.search(line):
                line += "\\&"  # roff would add a sentence space after "e.g." at a line end
            self.out.append(line)

    # Blocks ---------------------------------------------------------------------------------
    def blocks(self, blocks: list):
        for b in blocks:
            self.block(b)

    def block(self, b):
        if isinstance(b, Heading):
            text = heading_plain(b.text) if b.level == 1 else None
            if b.level == 1:
                self.section = text.upper()
                self.out.append(".SH")
                self.emit_text(escape_text(text.upper()))
            else:
                self.out.append(".SS")
                self.emit_text(self.text(b.text))
        elif isinstance(b, Paragraph):
            self.out.append(".PP")
            self.emit_text(self.text(b.text))
        elif isinstance(b, Code):
            self.out.extend([".PP", ".RS 4", ".nf"])
            for line in b.lines:
                literal = escape_literal(line.rstrip())
                if literal[:1] in (".", "'"):
                    literal = "\\&" + literal
                self.out.append(literal)
            self.out.extend([".fi", ".RE"])
        elif isinstance(b, ListBlock):
            self.list_block(b)
        elif isinstance(b, Table):
            self.table(b)
        elif isinstance(b, Quote):
            self.out.append(".RS 4")
            self.blocks(b.blocks)
            self.out.append(".RE")
        elif isinstance(b, Include):
            raise MarkdownError(f"unexpanded include of {b.path}")

    def list_block(self, b: ListBlock):
        width = 2 if not b.ordered else len(str(b.start + len(b.items) - 1)) + 2
        for k, item in enumerate(b.items):
            tag = "\\(bu" if not b.ordered else f"{b.start + k}."
            self.out.append(f".IP {tag} {width}")
            rest = item
            if item and isinstance(item[0], Paragraph):
                self.emit_text(self.text(item[0].text))
                rest = item[1:]
            if rest:
                self.out.append(f".RS {width}")
                self.blocks(rest)
                self.out.append(".RE")

    def table(self, b: Table):
        header = [heading_plain(h) for h in b.header]
        last_is_text = len(header) == 2 or header[-1].lower() in ("meaning", "description")
        for row in b.rows:
            self.out.append(".TP")
            self.emit_text(self.text(row[0]) if row[0].strip() else "\\&")
            self.out.append(".br")  # the text below the tag, however short the tag
            labelled = row[1:-1] if last_is_text else row[1:]
            parts = [f"\\fI{escape_text(name)}\\fR: {self.text(cell)}"
                     for name, cell in zip(header[1:], labelled) if cell.strip()]
            body = "; ".join(parts)
            if last_is_text and len(row) > 1 and row[-1].strip():
                if body:
                    self.emit_text(body + ".")
                    self.out.append(".br")
                body = self.text(row[-1])
            self.emit_text(body or "\\&")

    def notes_section(self):
        if not self.notes:
            return []
        out = [".SH", "NOTES"]
        for label, url in self.notes:
            out.extend([".TP", self.text_line(label), escape_literal(url, breakable=True)])
        return out

    def text_line(self, plain: str) -> str:
        line = escape_text(plain)
        return "\\&" + line if line[:1] in (".", "'") else line


def source_date(paths: list[Path]) -> str:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.isdigit():
        stamp = int(epoch)
    else:
        stamp = int(max(p.stat().st_mtime for p in paths))
    return datetime.datetime.fromtimestamp(stamp, datetime.timezone.utc).strftime("%Y-%m-%d")


def convert(page: Path, version: str, date: str | None) -> tuple[str, list[Path]]:
    """The roff text of the page and the Markdown files it was made from."""
    used = [page.resolve()]
    blocks = parse_blocks(read_markdown(page))
    blocks = expand_includes(blocks, page.parent, used)
    if not blocks or not isinstance(blocks[0], Heading) or blocks[0].level != 1:
        raise MarkdownError(f"{page}: the first line must be the title, like # dnsmoat(8)")
    m = re.fullmatch(r"(?P<name>[\w.+-]+)\((?P<section>\w+)\)", heading_plain(blocks[0].text))
    if not m:
        raise MarkdownError(f"{page}: the title must be NAME(SECTION), like # dnsmoat(8)")
    name, section = m["name"], m["section"]
    date = date or source_date(used)
    manual = {"1": "User Commands", "5": "File Formats", "8": "System Administration"}
    r = Renderer()
    root = Path(__file__).resolve().parent.parent
    sources = ", ".join(dict.fromkeys(os.path.relpath(p, root) for p in used))
    r.out.extend([
        f'.\\" {name}({section}), generated by cmake/markdown_to_man.py from {sources}.',
        '.\\" Do not edit: change the Markdown and rebuild.',
        f'.TH "{name.upper()}" "{section}" "{date}" "{name} {version}" '
        f'"{manual.get(section, "")}"',
        ".nh",  # no hyphenation: names, keys and paths stay whole
        ".ad l",  # ragged right: no stretched spaces between words
    ])
    r.blocks(blocks[1:])
    notes = r.notes_section()
    if notes:
        see_also = next((k for k in range(len(r.out) - 1)
                         if r.out[k] == ".SH" and r.out[k + 1] == "SEE ALSO"), None)
        if see_also is None:
            r.out.extend(notes)
        else:
            r.out[see_also:see_also] = notes
    return "\n".join(r.out) + "\n", used


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("page", type=Path, help="the page's Markdown skeleton")
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--version", default="", help="shown in the page footer")
    parser.add_argument("--date", help="YYYY-MM-DD; default SOURCE_DATE_EPOCH or newest source")
    parser.add_argument("--depfile", type=Path, help="write a Makefile-style dependency file")
    args = parser.parse_args(argv)
    try:
        roff, used = convert(args.page, args.version, args.date)
    except (MarkdownError, OSError) as e:
        print(f"markdown_to_man: {e}", file=sys.stderr)
        return 1
    temp = args.output.with_name(args.output.name + ".tmp")
    temp.write_text(roff, encoding="ascii")
    temp.replace(args.output)
    if args.depfile:
        deps = " ".join(dict.fromkeys(str(p).replace(" ", "\\ ")
                                      for p in [Path(__file__).resolve(), *used]))
        args.depfile.write_text(f"{args.output.resolve()}: {deps}\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
