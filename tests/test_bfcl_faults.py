"""benches/bfcl_faults.py writes arguments the ways models break them: its serializer, held on values of our
own. The benchmark runs in sessions against a snapshot of BFCL's data, never here."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import random
import sys

_DIR = pathlib.Path(__file__).parent.parent / "benches"
sys.path.insert(0, str(_DIR))
_SPEC = importlib.util.spec_from_file_location("bfcl_faults", _DIR / "bfcl_faults.py")
assert _SPEC and _SPEC.loader
bfcl_faults = importlib.util.module_from_spec(_SPEC)
sys.modules["bfcl_faults"] = bfcl_faults
_SPEC.loader.exec_module(bfcl_faults)

VALUE = {"path": "C:\\temp\\notes.txt", "say": 'a "b" c', "body": "one\ntwo", "ok": True, "n": None, "xs": [1, 2.5]}


def test_the_clean_style_is_json() -> None:
    style = bfcl_faults.Style()
    assert style.dump(VALUE) == json.dumps(VALUE, ensure_ascii=False)
    style.indent = 2
    assert style.dump(VALUE) == json.dumps(VALUE, ensure_ascii=False, indent=2)


def test_faults_touch_only_what_they_name() -> None:
    style = bfcl_faults.Style()
    style.raw_newlines = style.raw_quotes = True
    text = style.dump(VALUE)
    assert '"C:\\\\temp\\\\notes.txt"' in text  # an escaped backslash before t or n stays escaped
    assert '"a "b" c"' in text and '"one\ntwo"' in text
    style = bfcl_faults.Style()
    style.quote = style.key_quote = "'"
    style.python_literals = True
    assert style.dump({"it": "it's"}) == "{'it': 'it\\'s'}"
    assert style.dump({"t": True, "f": False, "n": None}) == "{'t': True, 'f': False, 'n': None}"


def test_every_fault_changes_the_text_and_keeps_or_says_the_value() -> None:
    rng = random.Random(7)
    for name in bfcl_faults.FAULTS:
        made = bfcl_faults.make({"title": "The Old Man and the Sea", "year": 1952, "tags": ["novel", "sea"], "ok": True}, [name], 2, rng)
        assert made is not None, name
        text, meant = made
        assert text != json.dumps(meant, indent=2, ensure_ascii=False), name
        if name not in ("unescaped inner quotes", "raw newlines in strings"):
            assert meant["title"] == "The Old Man and the Sea", name
