#!/usr/bin/env python3
"""Fail on #include lines that break dnsmoat's module layering (docs/ARCHITECTURE.md).

Reads every C++ file under include/moat/<module>/ and src/<module>/ and checks each
`#include "moat/<other>/..."` or `#include <moat/<other>/...>`:
  * a module may include itself and modules in a lower layer only; two different modules in the
    same layer never include each other;
  * where ARCHITECTURE.md narrows what a module may include (e.g. upstream: layers 0-1 only),
    MAY_INCLUDE below says so;
  * layers 0-3 never include Asio, spdlog or the logging facade moat/core/log.hpp (no sockets,
    threads or logging below layer 4); the facade's own source, src/core/log.cpp, is the one
    file below layer 4 that reaches spdlog;
  * a relative include that climbs into another module (`#include "../wire/x.hpp"`) is refused:
    cross a module boundary through include/moat/<module>/ only.
An unknown module directory is an error too, so the table below stays complete.

Usage: check_layering.py [--root DIR]   (default: the repository holding this script)
Exit status: 0 clean, 1 violations (listed as file:line: message), 2 usage error.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

LAYERS: dict[str, int] = {
    "core": 0,
    "wire": 1, "http": 1, "metrics": 1,
    "filter": 2, "cache": 2, "querylog": 2, "config": 2,
    "engine": 3,
    "upstream": 4, "server": 4, "api": 4, "lists": 4,
    "app": 5,
}

# Narrower than "any lower layer", as the ARCHITECTURE.md table states. Modules not listed here
# may include every module of a lower layer.
MAY_INCLUDE: dict[str, set[str]] = {
    "filter": {"core", "wire"},
    "cache": {"core", "wire", "metrics"},
    "querylog": {"core", "wire"},
    "config": {"core", "wire"},
    "upstream": {"core", "wire", "http", "metrics"},
    "lists": {"core", "wire", "filter"},
}

# Same-layer includes that ARCHITECTURE.md allows: the server glues engine and upstream.
SAME_LAYER_ALLOWED: set[tuple[str, str]] = {("server", "upstream")}

# Third-party libraries reserved to layer 4 and up.
IO_LIBRARIES = ("asio", "spdlog", "curl")
IO_MIN_LAYER = 4

# The logging facade: core holds it so that every module from layer 4 up can log, but logging
# stays reserved to those layers. Its own two files are exempt (they are the facade).
LOG_HEADER = "moat/core/log.hpp"
LOG_FACADE_FILES = {"include/moat/core/log.hpp", "src/core/log.cpp"}

SUFFIXES = {".hpp", ".h", ".hh", ".hxx", ".ipp", ".inl", ".cpp", ".cc", ".cxx"}

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
MOAT_RE = re.compile(r"^moat/([A-Za-z0-9_]+)/")
IO_RE = re.compile(r"^(%s)(\.hpp|\.h|/)" % "|".join(IO_LIBRARIES))
RELATIVE_RE = re.compile(r"^(?:\.\./)+([A-Za-z0-9_]+)/")


def module_files(root: Path):
    """Yield (module, path) for every C++ file under include/moat/<m>/ and src/<m>/."""
    for base in (root / "include" / "moat", root / "src"):
        if not base.is_dir():
            continue
        for mod_dir in sorted(p for p in base.iterdir() if p.is_dir()):
            for path in sorted(mod_dir.rglob("*")):
                if path.is_file() and path.suffix in SUFFIXES:
                    yield mod_dir.name, path


def check_file(module: str, path: Path, root: Path) -> list[str]:
    rel = path.relative_to(root)
    if module not in LAYERS:
        return [f"{rel}:1: module '{module}' is not in the layer table of cmake/check_layering.py "
                "(add it there and to docs/ARCHITECTURE.md)"]
    layer = LAYERS[module]
    allowed = MAY_INCLUDE.get(module)
    errors = []
    facade = rel.as_posix() in LOG_FACADE_FILES
    text = path.read_text(encoding="utf-8", errors="replace")
    for lineno, line in enumerate(text.splitlines(), start=1):
        m = INCLUDE_RE.match(line)
        if not m:
            continue
        target = m.group(2).strip()
        where = f"{rel}:{lineno}"

        if target == LOG_HEADER and layer < IO_MIN_LAYER and not facade:
            errors.append(f"{where}: '{module}' (layer {layer}) includes <{target}>: logging only "
                          f"from layer {IO_MIN_LAYER} up")
            continue

        io = IO_RE.match(target)
        if io and layer < IO_MIN_LAYER and not facade:
            errors.append(f"{where}: '{module}' (layer {layer}) includes {io.group(1)} "
                          f"<{target}>: {', '.join(IO_LIBRARIES)} only from layer "
                          f"{IO_MIN_LAYER} up")
            continue

        rel_m = RELATIVE_RE.match(target)
        if rel_m and m.group(1) == '"' and rel_m.group(1) != module:
            errors.append(f"{where}: '{module}' reaches into another module with \"{target}\": "
                          "include its public header moat/<module>/... instead")
            continue

        mm = MOAT_RE.match(target)
        if not mm:
            continue
        other = mm.group(1)
        if other == module or (module, other) in SAME_LAYER_ALLOWED:
            continue
        if other not in LAYERS:
            errors.append(f"{where}: '{module}' includes unknown module '{other}' ({target})")
        elif LAYERS[other] >= layer:
            kind = "same-layer" if LAYERS[other] == layer else "upward"
            errors.append(f"{where}: {kind} include: '{module}' (layer {layer}) includes "
                          f"'{other}' (layer {LAYERS[other]}) via <{target}>")
        elif allowed is not None and other not in allowed:
            errors.append(f"{where}: '{module}' may include only {', '.join(sorted(allowed))}; "
                          f"it includes '{other}' via <{target}>")
    return errors


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="repository root (default: the parent of this script's directory)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    if not root.is_dir():
        print(f"check_layering: no directory {root}", file=sys.stderr)
        return 2

    errors: list[str] = []
    files = 0
    for module, path in module_files(root):
        files += 1
        errors.extend(check_file(module, path, root))

    if errors:
        for e in errors:
            print(e)
        print(f"check_layering: {len(errors)} violation(s) in {files} files "
              "(rules: docs/ARCHITECTURE.md, 'Modules and layering')")
        return 1
    print(f"check_layering: {files} files, layering ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
