"""Writes docs/errors.md from the error catalogue of the Rust core (toolmend.ERROR_CODES).

    python docs/gen_errors.py          # rewrite docs/errors.md
    python docs/gen_errors.py --check  # exit 1 when docs/errors.md differs from the catalogue
"""

from __future__ import annotations

import argparse
import pathlib
import sys

from toolmend.errors import catalogue_markdown

ERRORS_MD = pathlib.Path(__file__).with_name("errors.md")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    text = catalogue_markdown()
    if args.check:
        current = ERRORS_MD.read_text(encoding="utf-8") if ERRORS_MD.exists() else ""
        if current != text:
            print(f"{ERRORS_MD} is out of date: run python docs/gen_errors.py", file=sys.stderr)
            return 1
        return 0
    ERRORS_MD.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
