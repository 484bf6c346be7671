"""Realistic tool-call faults on public data: the Berkeley Function Calling Leaderboard's ground truth.

The ground-truth arguments of BFCL's simple, multiple and parallel categories (live and not, every language:
real argument dicts, each parameter given the first value its possible answers accept) are serialized, compact
and pretty, and broken by a seeded generator of the faults models make, one at a time and 2-3 together. A case
counts when the reader gives back exactly the original value (1 == 1.0, True != 1). Nothing is stored here:
the data is read from a snapshot of ShishirPatil/gorilla where it lies. Run in sessions, not in CI.

    python benches/bfcl_faults.py --gorilla DIR [-v] [--seed N]
    TOOLMEND_GORILLA_REPO=DIR python benches/bfcl_faults.py

DIR is a bare git directory or a work tree; ``DIR@COMMIT`` reads that commit, else the commit pinned below
when the snapshot has it, else HEAD. Without a snapshot it says so and exits 0. ``-v`` lists, per fault kind,
the first texts toolmend.loads misses (``--all``: every one).

Readers: toolmend.loads (the figure), toolmend.check_call (the tool-call path: arguments must be an object,
arguments encoded twice are decoded once more), json_repair.repair_json(return_objects=True),
fast_json_repair.repair_json(return_objects=True), jsonmend.loads.
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
from typing import Any, Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import quality  # noqa: E402
from peer_suites import Snapshot, same  # noqa: E402

PINNED = "6ea57973c7a6097fd7c5915698c54c17c5b1b6c8"
ENV = "TOOLMEND_GORILLA_REPO"
SEED = 20261201
_CATEGORY = re.compile(r"possible_answer/BFCL_v\d+_((?:live_)?(?:simple\w*|multiple|parallel|parallel_multiple))\.json$")
FAIL: Any = object()


# ---- the ground truth --------------------------------------------------------------------------


def _pick(options: Any) -> Any:
    """The value a model would write: the first accepted one that is not "" (BFCL's "may be omitted")."""
    if not isinstance(options, list):
        return _normalize(options)
    for option in options:
        if option != "":
            return _normalize(option)
    return None


def _normalize(value: Any) -> Any:
    # A dict inside a possible answer lists possible values per key, as the top level does.
    if isinstance(value, dict) and value and all(isinstance(v, list) for v in value.values()):
        out = {}
        for key, options in value.items():
            picked = _pick(options)
            if picked is not None:
                out[key] = picked
        return out
    if isinstance(value, list):
        return [_normalize(v) for v in value]
    return value


def load_arguments(snap: Snapshot) -> list[tuple[str, dict[str, Any]]]:
    """(category, arguments) for every call of the ground truth, each distinct argument dict once."""
    out, seen = [], set()
    for path in sorted(snap.files()):
        m = _CATEGORY.search(path)
        if not m or "unused" in path:
            continue
        for line in snap.read(path).splitlines():
            if not line.strip():
                continue
            for call in json.loads(line)["ground_truth"]:
                for _name, params in call.items():
                    args = {}
                    for key, options in params.items():
                        picked = _pick(options)
                        if picked is not None:
                            args[key] = picked
                    key = json.dumps(args, sort_keys=True)
                    if key not in seen:
                        seen.add(key)
                        out.append((m.group(1), args))
    return out


# ---- writing arguments the ways models write them ---------------------------------------------------

_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*$")
_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)")


class Style:
    """How one text is written: the faults that live inside the serialization."""

    def __init__(self) -> None:
        self.indent: int | None = None
        self.quote = '"'  # the string quote: " or '
        self.key_quote = '"'  # " ' or "" (unquoted) or "smart"
        self.smart_strings = False
        self.python_literals = False
        self.raw_quotes = False  # inner " written unescaped
        self.raw_newlines = False  # \n and \t written raw
        self.comment_after: int | None = None  # a comment after the n-th member comma of the top object
        self.trailing_comma = False

    def string(self, s: str, key: bool = False) -> str:
        quote = self.key_quote if key else self.quote
        if key and quote == "" and _IDENT.match(s):
            return s
        if quote == "":
            quote = self.quote
        smart = (key and quote == "smart") or (not key and self.smart_strings and "\u201d" not in s)
        if smart:
            quote = '"'
        raw = {'"'} if self.raw_quotes or quote == "'" else set()
        if self.raw_newlines:
            raw |= {"n", "t"}

        def escape(m: re.Match[str]) -> str:
            c = m.group(1)
            return {'"': '"', "n": "\n", "t": "\t"}[c] if c in raw else m.group(0)

        body = _ESCAPE.sub(escape, json.dumps(s, ensure_ascii=False)[1:-1])
        if quote == "'":
            body = body.replace("'", "\\'")
        if smart:
            return "\u201c" + body + "\u201d"
        return quote + body + quote

    def dump(self, value: Any, depth: int = 0) -> str:
        pad = "" if self.indent is None else "\n" + " " * (self.indent * (depth + 1))
        end = "" if self.indent is None else "\n" + " " * (self.indent * depth)
        if isinstance(value, dict):
            if not value:
                return "{}"
            parts = []
            for n, (k, v) in enumerate(value.items()):
                member = self.string(k, key=True) + ": " + self.dump(v, depth + 1)
                last = n == len(value) - 1
                if not last:
                    member += ","
                    if depth == 0 and self.comment_after == n:
                        member += " // " + _COMMENTS[n % len(_COMMENTS)] if self.indent else " /* note */"
                elif self.trailing_comma and depth == 0:
                    member += ","
                parts.append(pad + member if self.indent is not None else member)
            inner = "".join(parts) if self.indent is not None else " ".join(parts)
            return "{" + inner + end + "}"
        if isinstance(value, list):
            if not value:
                return "[]"
            items = [self.dump(v, depth + 1) for v in value]
            if self.indent is None:
                return "[" + ", ".join(items) + "]"
            return "[" + ",".join(pad + i for i in items) + end + "]"
        if isinstance(value, str):
            return self.string(value)
        if value is True:
            return "True" if self.python_literals else "true"
        if value is False:
            return "False" if self.python_literals else "false"
        if value is None:
            return "None" if self.python_literals else "null"
        return json.dumps(value)


_COMMENTS = ["the value the user gave", "required", "optional, default kept", "see the tool's docs"]
_PROSE_BEFORE = [
    "Sure! Here are the arguments for the call:",
    "I'll call the tool with these parameters:",
    "Based on your request, the function call arguments are:",
    "Here is the JSON:",
]
_PROSE_AFTER = [
    "Let me know if you need anything else.",
    "This should return the result you asked for.",
    "I have filled in every required parameter.",
]


def _strings(value: Any) -> list[tuple[Any, Any]]:
    """(container, key) of every non-empty string in value, for a fault that changes one."""
    out: list[tuple[Any, Any]] = []
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, str) and v:
                out.append((value, k))
            else:
                out.extend(_strings(v))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            if isinstance(v, str) and v:
                out.append((value, i))
            else:
                out.extend(_strings(v))
    return out


def _copy(value: Any) -> Any:
    return json.loads(json.dumps(value))


# Each fault: (meant value, style, rng) -> a change to the style or the meant value; False when it cannot apply.
# Text faults (truncation, wrappers) act on the text afterwards.


def _single_quotes(meant: Any, st: Style, rng: random.Random) -> bool:
    st.quote, st.key_quote = "'", "'"
    return True


def _unquoted_keys(meant: Any, st: Style, rng: random.Random) -> bool:
    st.key_quote = ""
    return isinstance(meant, dict) and any(_IDENT.match(k) for k in meant)


def _python_literals(meant: Any, st: Style, rng: random.Random) -> bool:
    st.python_literals = True
    return any(x in json.dumps(meant) for x in ("true", "false", "null"))


def _smart_quotes(meant: Any, st: Style, rng: random.Random) -> bool:
    st.key_quote = "smart"
    st.smart_strings = rng.random() < 0.5
    return bool(meant)


def _trailing_comma(meant: Any, st: Style, rng: random.Random) -> bool:
    st.trailing_comma = True
    return bool(meant)


def _comment(meant: Any, st: Style, rng: random.Random) -> bool:
    if len(meant) < 2:
        return False
    st.comment_after = rng.randrange(len(meant) - 1)
    return True


def _inner_quotes(meant: Any, st: Style, rng: random.Random) -> bool:
    """Inner quotes written unescaped. Few BFCL values hold any: where none does, one string value is given a
    quoted word first (the value meant changes with it), the way models quote names and titles."""
    st.raw_quotes = True
    if any('"' in c[k] for c, k in _strings(meant)):
        return True
    spots = [(c, k) for c, k in _strings(meant) if len(c[k].split()) >= 2]
    if not spots:
        return False
    c, k = rng.choice(spots)
    words = c[k].split(" ")
    i = rng.choice([n for n, w in enumerate(words) if w])
    words[i] = '"' + words[i] + '"'
    c[k] = " ".join(words)
    return True


def _raw_newlines(meant: Any, st: Style, rng: random.Random) -> bool:
    """Line breaks written raw. No BFCL value of these categories holds one: a string value of two words or more
    is given a line break for a space first (the value meant changes with it), as in a message or a file."""
    st.raw_newlines = True
    if any("\n" in c[k] or "\t" in c[k] for c, k in _strings(meant)):
        return True
    spots = [(c, k) for c, k in _strings(meant) if " " in c[k].strip()]
    if not spots:
        return False
    c, k = rng.choice(spots)
    s = c[k]
    spaces = [i for i, ch in enumerate(s) if ch == " " and 0 < i < len(s) - 1]
    i = rng.choice(spaces)
    c[k] = s[:i] + "\n" + s[i + 1 :]
    return True


STYLE_FAULTS: dict[str, Callable[[Any, Style, random.Random], bool]] = {
    "single quotes": _single_quotes,
    "unquoted keys": _unquoted_keys,
    "Python literals (True/None)": _python_literals,
    "smart quotes": _smart_quotes,
    "unescaped inner quotes": _inner_quotes,
    "raw newlines in strings": _raw_newlines,
    "comments": _comment,
    "trailing comma": _trailing_comma,
}


def _missing_brace(text: str, rng: random.Random, cut: bool) -> str | None:
    stripped = text.rstrip()
    return stripped[:-1] if stripped.endswith("}") else None


def _cut_off(text: str, rng: random.Random, cut: bool) -> str | None:
    """The reply stops after the last value: every closer at the end missing, and at times the last quote."""
    end = text.rstrip()
    while end and end[-1] in "}] \n\t,":
        end = end[:-1]
    if end and end[-1] in "\"'\u201d" and rng.random() < 0.5:
        end = end[:-1]
    if end == text.rstrip()[:-1] or not end:
        return None  # one brace only is the missing-brace fault
    return end


# A reply cut off has no end: wrapped, it keeps only the opening of its wrapper.


def _fence(text: str, rng: random.Random, cut: bool) -> str | None:
    lang = rng.choice(["json", "json", "", "JSON"])
    return f"```{lang}\n{text}" + ("" if cut else "\n```")


def _prose(text: str, rng: random.Random, cut: bool) -> str | None:
    where = "before" if cut else rng.choice(["before", "after", "both"])
    before = rng.choice(_PROSE_BEFORE) + "\n\n" if where != "after" else ""
    after = "\n\n" + rng.choice(_PROSE_AFTER) if where != "before" else ""
    return before + text + after


def _double_encoded(text: str, rng: random.Random, cut: bool) -> str | None:
    """The arguments written as a JSON string (encoded twice), behind prose or in a fence; at times the
    outer quotes are left off (the escaped text alone)."""
    encoded = json.dumps(text, ensure_ascii=False)
    if rng.random() < 0.3:
        encoded = encoded[1:-1]
    elif cut:
        encoded = encoded[:-1]
    if rng.random() < 0.5:
        return rng.choice(_PROSE_BEFORE) + " " + encoded
    return "```json\n" + encoded + ("" if cut else "\n```")


TEXT_FAULTS: dict[str, Callable[[str, random.Random, bool], str | None]] = {
    "missing closing brace": _missing_brace,
    "cut off": _cut_off,
    "double-encoded behind prose or a fence": _double_encoded,
    "markdown fence": _fence,
    "prose before/after": _prose,
}
FAULTS = list(STYLE_FAULTS) + list(TEXT_FAULTS)
# Pairs that do not go together: two quoting styles, two truncations, two wrappers of the same text.
_CLASH = [
    {"single quotes", "smart quotes"},
    {"unquoted keys", "smart quotes"},
    {"missing closing brace", "cut off"},
    {"double-encoded behind prose or a fence", "markdown fence"},
    {"double-encoded behind prose or a fence", "prose before/after"},
    {"cut off", "trailing comma"},
]


def make(value: dict[str, Any], faults: list[str], indent: int | None, rng: random.Random) -> tuple[str, Any] | None:
    """(broken text, the value meant), or None when a fault cannot apply to this value."""
    meant = _copy(value)
    st = Style()
    st.indent = indent
    for name in faults:
        if name in STYLE_FAULTS and not STYLE_FAULTS[name](meant, st, rng):
            return None
    text = st.dump(meant)
    for name in ("missing closing brace", "cut off", "double-encoded behind prose or a fence", "markdown fence", "prose before/after"):
        if name in faults:
            broken = TEXT_FAULTS[name](text, rng, "cut off" in faults)
            if broken is None:
                return None
            text = broken
    if text == json.dumps(meant, ensure_ascii=False, indent=indent):
        return None
    return text, meant


def cases(args: list[tuple[str, dict[str, Any]]], seed: int = SEED) -> dict[str, list[tuple[str, str, Any]]]:
    """{"single": [(fault, text, meant)], "combined": [(faults, text, meant)]}."""
    rng = random.Random(seed)
    single, combined = [], []
    for _category, value in args:
        for indent in (None, 2):
            for name in FAULTS:
                made = make(value, [name], indent, rng)
                if made:
                    single.append((name, made[0], made[1]))
    for _category, value in args:
        for _attempt in range(8):
            names = rng.sample(FAULTS, rng.choice((2, 3)))
            if any(c <= set(names) for c in _CLASH):
                continue
            made = make(value, names, rng.choice((None, 2)), rng)
            if made:
                combined.append((" + ".join(sorted(names)), made[0], made[1]))
                break
    return {"single": single, "combined": combined}


# ---- readers -------------------------------------------------------------------------------------


def readers() -> dict[str, Callable[[str], Any]]:
    import toolmend

    def check_call(text: str) -> Any:
        result = toolmend.check_call("f", text)
        return result.calls[0].arguments if result.ok and result.calls else FAIL

    found: dict[str, Callable[[str], Any]] = {"toolmend.loads": toolmend.loads, "toolmend.check_call": check_call}
    # The peers read as quality.py reads them (each installed one's objects-returning call).
    found.update((name, read) for name, read in quality.readers().items() if name != "toolmend")
    return found


def _ok(read: Callable[[str], Any], text: str, meant: Any) -> bool:
    try:
        got = read(text)
    except Exception:  # noqa: BLE001 - a reader that raises reads nothing
        return False
    return got is not FAIL and same(got, meant)


def main(argv: list[str]) -> int:
    spec, verbose, show_all, seed = os.environ.get(ENV), False, False, SEED
    args = iter(argv)
    for arg in args:
        if arg == "-v":
            verbose = True
        elif arg == "--all":
            verbose = show_all = True
        elif arg == "--gorilla":
            spec = next(args)
        elif arg == "--seed":
            seed = int(next(args))
        else:
            print(__doc__)
            return 2
    if not spec or not os.path.isdir(spec.partition("@")[0]):
        print(f"no gorilla snapshot (pass --gorilla DIR or set {ENV}): nothing measured")
        return 0
    snap = Snapshot(spec, PINNED)
    data = load_arguments(snap)
    built = cases(data, seed)
    found = readers()
    names = list(found)
    from importlib.metadata import version

    import toolmend

    peers = []
    for mod in ("json_repair", "fast_json_repair", "jsonmend"):
        try:
            peers.append(f"{mod} {version(mod)}")
        except Exception:  # noqa: BLE001
            pass
    cats: dict[str, int] = {}
    for c, _ in data:
        cats[c] = cats.get(c, 0) + 1
    print(f"gorilla commit {snap.commit}; {len(data)} distinct argument dicts ({', '.join(f'{c} {n}' for c, n in cats.items())})")
    print(f"seed {seed}; toolmend ({toolmend.__file__}); peers: {', '.join(peers)}")
    print()
    results = {kind: {n: [_ok(found[n], t, m) for _, t, m in built[kind]] for n in names} for kind in built}
    print("| cases | n | " + " | ".join(names) + " |")
    print("|---|---:|" + "---:|" * len(names))
    encoded = "double-encoded behind prose or a fence"
    for kind, title in (("single", "single faults"), ("combined", "2-3 faults together")):
        for aside in (False, True):
            idx = [i for i, (f, _, _) in enumerate(built[kind]) if not (aside and encoded in f.split(" + "))]
            label = title + (", double-encoded aside" if aside else "")
            cells = [f"{sum(results[kind][r][i] for i in idx) / len(idx):.1%}" for r in names]
            print(f"| {label} | {len(idx)} | " + " | ".join(cells) + " |")
    print()
    print("| single fault | n | " + " | ".join(names) + " |")
    print("|---|---:|" + "---:|" * len(names))
    for fault in FAULTS:
        idx = [i for i, (f, _, _) in enumerate(built["single"]) if f == fault]
        cells = [f"{sum(results['single'][r][i] for i in idx) / len(idx):.1%}" if idx else "n/a" for r in names]
        print(f"| {fault} | {len(idx)} | " + " | ".join(cells) + " |")
    print()
    print("| in a combination with | n | " + " | ".join(names) + " |")
    print("|---|---:|" + "---:|" * len(names))
    for fault in FAULTS:
        idx = [i for i, (f, _, _) in enumerate(built["combined"]) if fault in f.split(" + ")]
        cells = [f"{sum(results['combined'][r][i] for i in idx) / len(idx):.1%}" if idx else "n/a" for r in names]
        print(f"| {fault} | {len(idx)} | " + " | ".join(cells) + " |")
    if verbose:
        import toolmend as tm

        for kind in ("single", "combined"):
            missed: dict[str, list[int]] = {}
            for i, (f, _, _) in enumerate(built[kind]):
                if not results[kind]["toolmend.loads"][i]:
                    missed.setdefault(f, []).append(i)
            for f, idx in sorted(missed.items(), key=lambda x: -len(x[1])):
                print(f"\n## {kind}: {f} ({len(idx)} missed)")
                for i in idx if show_all else idx[:5]:
                    _, text, meant = built[kind][i]
                    try:
                        got: Any = json.dumps(tm.loads(text), ensure_ascii=False)
                    except Exception as e:  # noqa: BLE001
                        got = f"raises {e}"
                    print(f"  {text!r}\n    meant    {json.dumps(meant, ensure_ascii=False)}\n    toolmend {got}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
