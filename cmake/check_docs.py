#!/usr/bin/env python3
"""Checks that the documentation says what the code does. Three checks, run by ctest (label
`docs`, registered in cmake/ManPage.cmake):

  check_docs.py manpage --page build/dev/dnsmoat.8 --source docs/man/dnsmoat.8.md
      The generated man page renders without a warning (`groff -man -Tutf8 -ww -z`, and
      `man --warnings -l` when man-db is installed), and the rendered text holds the text of
      every block of every document it includes (each section of docs/configuration.md among
      them), so the converter drops nothing.

  check_docs.py config-keys --dnsmoat BIN [--emulator CMD] --doc docs/configuration.md
      Every key the config loader accepts is documented, and everything documented exists.
      The keys come from the loader itself: `dnsmoat check-config` on a file with an unknown
      key in a table answers "unknown key ... (valid keys: ...)", so probing each table (and
      each key as a table, and as an array of tables) finds the whole schema, nested tables
      included, whatever the C++ looks like. Then: each table has a `[name]` or `[[name]]`
      heading of that kind in the doc (a nested table without one is covered by its parent's
      section), each of its keys is in the first column of a key table there, every
      documented section and key exists, and every TOML example uses only existing keys.

  check_docs.py cli --dnsmoat BIN [--emulator CMD] --doc docs/cli.md --synopsis docs/daemon.md
      docs/cli.md has a section for every subcommand `dnsmoat --help` lists and documents
      each option `dnsmoat COMMAND --help` lists; every option in its tables and in the
      synopsis blocks (also daemon.md's "Command line") exists, and each synopsis names every
      subcommand.

Exit status 0 when all is well, 1 with the findings, 2 when the check cannot run.
Standard library only.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import markdown_to_man as md  # noqa: E402  (the converter's own Markdown parser)

# --- helpers -----------------------------------------------------------------------------------


def inline_codes(text: str) -> list[str]:
    out = []

    def walk(nodes):
        for node in nodes:
            if node[0] == "code":
                out.append(node[1])
            elif node[0] in ("strong", "em", "link"):
                walk(node[1])
    walk(md.parse_inline(text))
    return out


def sections_of(blocks: list) -> list[tuple[md.Heading, list, list]]:
    """(heading, own blocks up to the next heading, all blocks up to the next heading of the
    same or a higher level) for each heading."""
    out = []
    for k, b in enumerate(blocks):
        if not isinstance(b, md.Heading):
            continue
        own_end = k + 1
        while own_end < len(blocks) and not isinstance(blocks[own_end], md.Heading):
            own_end += 1
        end = own_end
        while end < len(blocks) and not (isinstance(blocks[end], md.Heading)
                                         and blocks[end].level <= b.level):
            end += 1
        out.append((b, blocks[k + 1:own_end], blocks[k + 1:end]))
    return out


def walk_blocks(blocks: list):
    """Every block, list items' and quotes' contents included."""
    for b in blocks:
        yield b
        if isinstance(b, md.ListBlock):
            for item in b.items:
                yield from walk_blocks(item)
        elif isinstance(b, md.Quote):
            yield from walk_blocks(b.blocks)


def block_texts(b) -> list[str]:
    """What a reader of block `b` sees, in pieces that stay whole in any rendering."""
    if isinstance(b, md.Heading):
        return [md.heading_plain(b.text)]
    if isinstance(b, md.Paragraph):
        return [md.plain_text(md.parse_inline(b.text))]
    if isinstance(b, md.Code):
        return [line for line in b.lines if line.strip()]
    if isinstance(b, md.Table):
        return [md.plain_text(md.parse_inline(cell)) for row in b.rows for cell in row
                if cell.strip()]
    return []


class Findings:
    def __init__(self):
        self.items: list[tuple[str, list[str]]] = []

    def add(self, text: str, details: list[str] | None = None):
        if (text, details or []) not in self.items:
            self.items.append((text, details or []))

    def report(self, what: str) -> int:
        if not self.items:
            print(f"check_docs {what}: ok")
            return 0
        print(f"check_docs {what}: {len(self.items)} problem(s):", file=sys.stderr)
        for text, details in self.items:
            print(f"  {text}", file=sys.stderr)
            for line in details:
                print(f"      {line}", file=sys.stderr)
        return 1


# --- manpage -----------------------------------------------------------------------------------

RENDERED_CHARS = str.maketrans({
    "\u2010": "-", "\u2011": "-", "\u2212": "-", "\u2013": "-", "\u2018": "`", "\u2019": "'",
    "\u201c": '"', "\u201d": '"', "\u02c6": "^", "\u02dc": "~", "\u00a0": " ", "\u2032": "'",
})


def squash(text: str) -> str:
    """Text with every space removed and typographic characters made ASCII: line breaks,
    wrapping and groff's glyph choices do not matter when comparing."""
    return re.sub(r"\s+", "", text.translate(RENDERED_CHARS))


def check_manpage(args) -> int:
    findings = Findings()
    groff = shutil.which("groff")
    if not groff:
        print("check_docs manpage: groff is not installed (Debian: groff-base, "
              "scripts/setup.sh)", file=sys.stderr)
        return 2
    env = dict(os.environ, LC_ALL="C.UTF-8", MANWIDTH="80", MANPAGER="cat", PAGER="cat")
    lint = subprocess.run([groff, "-man", "-Tutf8", "-ww", "-z", str(args.page)],
                          capture_output=True, text=True, env=env)
    if lint.returncode != 0 or lint.stderr.strip():
        findings.add(f"groff -man -Tutf8 -ww -z {args.page} (exit {lint.returncode}):",
                     lint.stderr.splitlines())
    man = shutil.which("man")
    if man:
        viewed = subprocess.run([man, "--warnings=w", "-l", str(args.page)],
                                capture_output=True, text=True, env=env)
        if viewed.returncode != 0 or viewed.stderr.strip():
            findings.add(f"man --warnings=w -l {args.page} (exit {viewed.returncode}):",
                         viewed.stderr.splitlines())
    else:
        print("check_docs manpage: man is not installed; checked with groff alone")
    # grotty: -c plain text without SGR, -b -u -o no overstriking for bold and underline.
    render = subprocess.run([groff, "-man", "-Tutf8", "-P-cbou", str(args.page)],
                            capture_output=True, text=True, env=env)
    if render.returncode != 0:
        findings.add(f"groff cannot render {args.page}: {render.stderr.strip()}")
        return findings.report("manpage")
    page = squash(render.stdout)

    used: list[Path] = []
    blocks = md.expand_includes(md.parse_blocks(md.read_markdown(args.source)),
                                args.source.parent, used)
    # Each block's text, grouped by the section (heading) it is in; the page's title (its
    # first heading, "dnsmoat(8)") is the .TH line, not text.
    if blocks and isinstance(blocks[0], md.Heading):
        blocks = blocks[1:]
    section = "(top)"
    missing: dict[str, list[str]] = {}
    checked_sections = 0
    for b in walk_blocks(blocks):
        if isinstance(b, md.Heading):
            section = md.heading_plain(b.text)
            checked_sections += 1
        for text in block_texts(b):
            if squash(text) and squash(text) not in page:
                missing.setdefault(section, []).append(text)
    for name, texts in missing.items():
        findings.add(f"section \"{name}\": {len(texts)} piece(s) of text missing from the "
                     f"rendered page, e.g.:", [repr(t[:100]) for t in texts[:5]])
    required = ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "CONFIGURATION", "SIGNALS",
                "FILES", "SEE ALSO"]
    headings = re.findall(r"^([A-Z][A-Z ]+)$", render.stdout, re.M)
    for name in required:
        if name not in headings:
            findings.add(f"the page has no {name} section")
    print(f"check_docs manpage: {len(set(used))} included documents, {checked_sections} sections "
          f"compared with the rendered page")
    return findings.report("manpage")


# --- running dnsmoat ---------------------------------------------------------------------------

PROBE = "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"  # far from every real key: no "did you mean"
UNKNOWN = re.compile(r'^.*?:\d+: (?P<path>\S+): unknown key "' + PROBE +
                     r'" \(valid keys: (?P<keys>[^)]*)\)$')


class Dnsmoat:
    def __init__(self, binary: str, emulator: str):
        self.command = shlex.split(emulator) + [binary] if emulator else [binary]
        self.tmp = tempfile.TemporaryDirectory(prefix="moat-docs-")
        self.runs = 0

    def run(self, *args: str) -> subprocess.CompletedProcess:
        self.runs += 1
        return subprocess.run(self.command + list(args), capture_output=True, text=True,
                              timeout=120, env=dict(os.environ, LC_ALL="C.UTF-8"))

    def check(self, document: dict) -> list[str]:
        """The error lines of `dnsmoat check-config` on `document` (as JSON)."""
        path = Path(self.tmp.name) / "probe.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        result = self.run("check-config", str(path))
        return (result.stdout + result.stderr).splitlines()


# --- config-keys -------------------------------------------------------------------------------


class Table:
    def __init__(self, path: tuple, array: bool, keys: list[str]):
        self.path = path  # ((name, is_array), ...)
        self.array = array
        self.keys = list(dict.fromkeys(keys))
        self.freeform = False  # also accepts a table of names (local.records)

    @property
    def name(self) -> str:
        return ".".join(n for n, _ in self.path)


def error_path(path: tuple) -> str:
    return "".join(("." if k else "") + n + ("[0]" if a else "") for k, (n, a) in enumerate(path))


def place(document: dict, path: tuple, key: str, value):
    """Puts `key = value` into the table at `path` inside `document`."""
    node = document
    for name, array in path:
        if array:
            node = node.setdefault(name, [{}])[0]
        else:
            node = node.setdefault(name, {})
    node[key] = value


def probe(dnsmoat: Dnsmoat, path: tuple, keys: list[str], array: bool) -> dict[str, list[str]]:
    """For each key of the table at `path`: its valid keys when it is a table (`array`:
    an array of tables), from one run of check-config per batch of keys."""
    if not keys:
        return {}
    document: dict = {}
    for key in keys:
        place(document, path, key, [{PROBE: 1}] if array else {PROBE: 1})
    lines = dnsmoat.check(document)
    if any(re.search(r"and \d+ more errors? not shown", line) for line in lines):
        if len(keys) == 1:
            raise RuntimeError(f"too many errors probing {error_path(path)}.{keys[0]}")
        half = len(keys) // 2
        return {**probe(dnsmoat, path, keys[:half], array),
                **probe(dnsmoat, path, keys[half:], array)}
    found = {}
    prefix = error_path(path)
    for key in keys:
        expected = (f"{prefix}." if prefix else "") + key + ("[0]" if array else "") + "." + PROBE
        for line in lines:
            m = UNKNOWN.match(line)
            if m and m["path"] == expected:
                found[key] = [k.strip() for k in m["keys"].split(",") if k.strip()]
    return found


def freeform_keys(dnsmoat: Dnsmoat, path: tuple, keys: list[str]) -> set[str]:
    """Keys whose table value takes any key name (an error other than "unknown key" there)."""
    document: dict = {}
    for key in keys:
        place(document, path, key, {PROBE: 1})
    lines = dnsmoat.check(document)
    prefix = error_path(path)
    out = set()
    for key in keys:
        at = (f"{prefix}." if prefix else "") + key + "." + PROBE + ":"
        if any(f": {at}" in line and "unknown key" not in line for line in lines):
            out.add(key)
    return out


def discover_schema(dnsmoat: Dnsmoat) -> dict[str, Table]:
    lines = dnsmoat.check({PROBE: 1})
    root_keys = None
    for line in lines:
        m = UNKNOWN.match(line)
        if m and m["path"] == PROBE:
            root_keys = [k.strip() for k in m["keys"].split(",") if k.strip()]
    if root_keys is None:
        raise RuntimeError("dnsmoat check-config did not list the valid keys; it said:\n  "
                           + "\n  ".join(lines))
    tables = {"": Table((), False, root_keys)}
    queue = [tables[""]]
    while queue:
        table = queue.pop(0)
        if len(table.path) > 5:
            continue
        as_table = probe(dnsmoat, table.path, table.keys, False)
        rest = [k for k in table.keys if k not in as_table]
        as_array = probe(dnsmoat, table.path, rest, True)
        free = freeform_keys(dnsmoat, table.path, list(as_array)) if as_array else set()
        for key, keys in list(as_table.items()) + list(as_array.items()):
            array = key in as_array
            child = Table(table.path + ((key, array),), array, keys)
            child.freeform = key in free
            tables[child.name] = child
            queue.append(child)
    return tables


HEADING_TABLES = re.compile(r"\[\[([A-Za-z_][\w.]*)\]\]|\[([A-Za-z_][\w.]*)\]")


def check_config_keys(args) -> int:
    findings = Findings()
    dnsmoat = Dnsmoat(args.dnsmoat, args.emulator)
    try:
        schema = discover_schema(dnsmoat)
    except (RuntimeError, OSError, subprocess.SubprocessError) as e:
        print(f"check_docs config-keys: cannot read the schema from {args.dnsmoat}: {e}",
              file=sys.stderr)
        return 2
    blocks = md.parse_blocks(md.read_markdown(args.doc))
    doc = args.doc.name

    # Documented sections: heading → the table paths it names, with their kind.
    documented: dict[str, tuple[bool, md.Heading, list, list]] = {}
    for heading, own, full in sections_of(blocks):
        for m in HEADING_TABLES.finditer(md.heading_plain(heading.text)):
            name, array = (m[1], True) if m[1] else (m[2], False)
            documented[name] = (array, heading, own, full)

    def key_column(blocks_: list) -> set[str]:
        keys = set()
        for b in blocks_:
            if isinstance(b, md.Table) and md.heading_plain(b.header[0]).lower() == "key":
                for row in b.rows:
                    keys.update(inline_codes(row[0]))
        return keys

    def mentioned(blocks_: list, key: str) -> bool:
        for b in walk_blocks(blocks_):
            texts = []
            if isinstance(b, md.Paragraph):
                texts = [b.text]
            elif isinstance(b, md.Table):
                texts = [cell for row in b.rows for cell in row]
            elif isinstance(b, md.Code):
                pattern = re.compile(r"(^|[{,\s])" + re.escape(key) + r"\s*=|\"" + re.escape(key)
                                     + r"\"\s*:")
                if any(pattern.search(line) for line in b.lines):
                    return True
            if any(key in inline_codes(t) for t in texts):
                return True
        return False

    # The code's tables and keys in the doc.
    for name, table in sorted(schema.items()):
        if not name:
            continue
        section = documented.get(name)
        if section is None:
            ancestor = next((".".join(n for n, _ in table.path[:k]) for k in
                             range(len(table.path) - 1, 0, -1)
                             if ".".join(n for n, _ in table.path[:k]) in documented), None)
            if ancestor is None:
                bracket = f"[[{name}]]" if table.array else f"[{name}]"
                findings.add(f"{doc}: no section documents {bracket} (keys: "
                             f"{', '.join(table.keys)})")
                continue
            missing = [k for k in table.keys if not mentioned(documented[ancestor][3], k)]
            if missing:
                findings.add(f"{doc}: the section of [{ancestor}] does not mention the keys of "
                             f"{name}: {', '.join(missing)}")
            continue
        array, heading, own, _ = section
        if array != table.array:
            findings.add(f"{doc}: \"{md.heading_plain(heading.text)}\" writes {name} as "
                         f"{'[[...]]' if array else '[...]'}, but the loader reads "
                         f"{'an array of tables' if table.array else 'a table'}")
        documented_keys = key_column(own)
        missing = [k for k in table.keys if k not in documented_keys]
        if missing:
            findings.add(f"{doc}: [{name}] does not document {', '.join(missing)} (each key "
                         f"needs a row in a `| key | ... |` table of its section)")
    root = schema[""]
    for key in root.keys:
        if key not in schema and not mentioned(blocks, key):
            findings.add(f"{doc}: the top-level key {key} is not documented")

    # The doc's sections and keys in the code.
    for name, (array, heading, own, _) in sorted(documented.items()):
        table = schema.get(name)
        if table is None:
            findings.add(f"{doc}: \"{md.heading_plain(heading.text)}\" documents {name}, "
                         f"which the loader does not read")
            continue
        extra = sorted(key_column(own) - set(table.keys))
        if extra:
            findings.add(f"{doc}: [{name}] documents keys the loader does not accept: "
                         f"{', '.join(extra)}")

    # The TOML examples use real keys.
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        tomllib = None
        print("check_docs config-keys: no tomllib (Python < 3.11): TOML examples not checked")
    examples = 0
    if tomllib:
        for b in walk_blocks(blocks):
            if not isinstance(b, md.Code) or b.lang != "toml":
                continue
            examples += 1
            text = "\n".join(b.lines)
            try:
                data = tomllib.loads(text)
            except tomllib.TOMLDecodeError as e:
                findings.add(f"{doc}: a TOML example does not parse ({e}):",
                             text.splitlines()[:8])
                continue
            for problem in unknown_keys(schema, "", data):
                findings.add(f"{doc}: a TOML example uses {problem}")

    print(f"check_docs config-keys: {len(schema) - 1} tables, "
          f"{sum(len(t.keys) for t in schema.values())} keys read from the loader in "
          f"{dnsmoat.runs} runs of check-config; {len(documented)} documented sections, "
          f"{examples} TOML examples")
    return findings.report("config-keys")


def unknown_keys(schema: dict[str, Table], name: str, data: dict) -> list[str]:
    table = schema[name]
    out = []
    for key, value in data.items():
        path = f"{name}.{key}" if name else key
        if key not in table.keys:
            out.append(f"the unknown key {path}")
            continue
        child = schema.get(path)
        if child is None:
            continue
        if isinstance(value, dict) and not child.array:
            out.extend(unknown_keys(schema, path, value))
        elif isinstance(value, list) and child.array:
            for item in value:
                if isinstance(item, dict):
                    out.extend(unknown_keys(schema, path, item))
        elif not (isinstance(value, dict) and child.freeform):
            out.append(f"{path} as a {type(value).__name__}")
    return out


# --- cli ---------------------------------------------------------------------------------------

OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def help_sections(text: str) -> dict[str, list[str]]:
    """The lines under each "Name:" header of CLI11's help."""
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        m = re.match(r"^([A-Z][\w ]*):\s*$", line)
        if m:
            current = out.setdefault(m[1], [])
        elif current is not None and line.startswith("  "):
            current.append(line)
    return out


def help_options(text: str) -> set[str]:
    options = set()
    for line in help_sections(text).get("Options", []):
        first = line.split()[0]
        options.update(o for o in first.split(",") if o.startswith("-"))
    return options


def check_cli(args) -> int:
    findings = Findings()
    dnsmoat = Dnsmoat(args.dnsmoat, args.emulator)
    try:
        top = dnsmoat.run("--help")
    except (OSError, subprocess.SubprocessError) as e:
        print(f"check_docs cli: cannot run {args.dnsmoat}: {e}", file=sys.stderr)
        return 2
    commands = [line.split()[0] for line in help_sections(top.stdout).get("Subcommands", [])]
    if not commands:
        print(f"check_docs cli: `dnsmoat --help` lists no subcommands:\n{top.stdout}",
              file=sys.stderr)
        return 2
    global_options = help_options(top.stdout)
    options = {c: help_options(dnsmoat.run(c, "--help").stdout) for c in commands}
    ignored = {"-h", "--help"}

    blocks = md.parse_blocks(md.read_markdown(args.doc))
    doc = args.doc.name
    sections = {}
    for heading, own, full in sections_of(blocks):
        m = re.fullmatch(r"dnsmoat ([\w-]+)", md.heading_plain(heading.text))
        if m:
            sections[m[1]] = full
    def code_words(blocks_: list) -> set[str]:
        """The first word of every inline code span (`--config FILE` -> --config)."""
        words = set()
        for b in walk_blocks(blocks_):
            texts = [b.text] if isinstance(b, md.Paragraph) else \
                [cell for row in b.rows for cell in row] if isinstance(b, md.Table) else []
            for text in texts:
                words.update(c.split()[0] for c in inline_codes(text) if c.strip())
        return words

    for option in sorted(global_options - code_words(blocks)):
        findings.add(f"{doc}: the global option {option} is not documented")

    for command in commands:
        full = sections.get(command)
        if full is None:
            findings.add(f"{doc}: no section \"dnsmoat {command}\" (`dnsmoat --help` lists it)")
            continue
        for b in walk_blocks(full):
            if isinstance(b, md.Table):  # the option tables: their first column
                for row in b.rows:
                    for o in (c.split()[0] for c in inline_codes(row[0]) if c.strip()):
                        if o.startswith("-") and o not in options[command] | global_options:
                            findings.add(f"{doc}: dnsmoat {command} documents {o}, which "
                                         f"`dnsmoat {command} --help` does not list")
        missing = sorted(options[command] - ignored - code_words(full))
        if missing:
            findings.add(f"{doc}: dnsmoat {command}: options not documented: "
                         f"{', '.join(missing)}")
    for name in sections:
        if name not in commands:
            findings.add(f"{doc}: \"dnsmoat {name}\" is not a command of `dnsmoat --help`")

    # Synopsis blocks: cli.md's, and the "Command line" section of each --synopsis file.
    synopses = [(doc, b) for b in walk_blocks(blocks) if isinstance(b, md.Code)]
    for path in args.synopsis:
        other = md.parse_blocks(md.read_markdown(path))
        for heading, own, full in sections_of(other):
            if md.heading_plain(heading.text) == "Command line":
                synopses.extend((path.name, b) for b in walk_blocks(own)
                                if isinstance(b, md.Code))
    for where, block in synopses:
        current, named = None, set()
        for line in block.lines:
            if line.startswith("$ "):  # an example session, not a synopsis
                current = None
                continue
            m = re.match(r"^(?:sudo )?dnsmoat(?: ([a-z][\w-]*))?", line)
            if m:
                current = m[1] or ""
                named.add(current)
            elif not line.startswith(" "):
                current = None
            if current is None:
                continue
            if current and current not in commands:
                findings.add(f"{where}: the synopsis names dnsmoat {current}, which "
                             f"`dnsmoat --help` does not list")
                continue
            valid = options.get(current, set()) | global_options
            for o in OPTION.findall(line[m.end():] if m else line):
                if o not in valid:
                    findings.add(f"{where}: dnsmoat {current or ''}: the synopsis shows {o}, "
                                 f"which `dnsmoat {current} --help` does not list")
        if len(named - {""}) > 1:  # a full synopsis, not one command's
            for command in commands:
                if command not in named:
                    findings.add(f"{where}: the synopsis leaves out dnsmoat {command}")
    print(f"check_docs cli: {len(commands)} commands, "
          f"{sum(len(o) for o in options.values())} options, {len(synopses)} code blocks")
    return findings.report("cli")


# --- main --------------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="check", required=True)
    p = sub.add_parser("manpage", help="the man page renders cleanly and says everything")
    p.add_argument("--page", type=Path, required=True)
    p.add_argument("--source", type=Path, required=True)
    p.set_defaults(run=check_manpage)
    for name, run in (("config-keys", check_config_keys), ("cli", check_cli)):
        p = sub.add_parser(name)
        p.add_argument("--dnsmoat", required=True, help="the dnsmoat binary")
        p.add_argument("--emulator", default="", help="runs the binary (qemu-aarch64 -L ...)")
        p.add_argument("--doc", type=Path, required=True)
        p.add_argument("--synopsis", type=Path, action="append", default=[])
        p.set_defaults(run=run)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
