"""Ollama's own tool-call parser tests as an external benchmark: run in sessions, not in CI (no test runs it).

The table-driven tests of Ollama's model output parsers (model/parsers/*_test.go, harmony/*_test.go,
tools/*_test.go) are read where they lie, in a snapshot of the ollama repository; no case is copied here.
The Go test text is read with a small tokenizer for Go literals (raw and interpreted strings, ``+``
concatenation, ``[]string{...}`` chunk slices joined) and a reader of composite literals: a case is an element
of a ``[]struct{...}`` table whose struct declares the model output (``input``, ``inputs`` or ``chunks``) and
the tool calls expected (a field of type ``[]api.ToolCall``, ``api.ToolCall`` or ``*api.ToolCall``); the
expected calls are ``api.ToolCall{Function: api.ToolCallFunction{Name: ..., Arguments: ...}}`` with the
arguments a map literal, ``testArgs(map...)``, ``args(json)`` or ``api.NewToolCallFunctionArguments()``.
Imperative tests that feed chunks to a parser and check ``len(calls)`` and ``calls[i].Function.Name`` are read
too (names only, and the arguments they check with ``Arguments.Get``). A case that can't be read is skipped and
counted by reason.

Each case is scored by ``toolmend.parse_response`` on the output as an Ollama message's content (no registry,
``text_calls`` default): the calls' names and arguments (as JSON values) must match the expected ones in order;
a case expecting no call is met when toolmend finds no call and reports no error (where Ollama's parser is
expected to fail, no call is enough). Where a test's output begins inside a reasoning block the generation
prompt opened (the output closes a think tag it never opened), the opening tag is put back in front.

    python benches/ollama_parsers.py --ollama DIR[@COMMIT] [-v] [--json OUT]
    TOOLMEND_OLLAMA_REPO=DIR python benches/ollama_parsers.py

DIR is a bare git directory or a work tree; without ``@COMMIT`` the pinned commit is read when the snapshot
has it, else HEAD. Without a snapshot the script says so and exits 0. ``-v`` lists the misses by file.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_suites import Snapshot, same  # noqa: E402 - the same snapshot reader and JSON-value equality

PINNED = "fb30760996871fa9460115c753afd2c60d4ab0f7"
ENV = "TOOLMEND_OLLAMA_REPO"
FILES = re.compile(r"^(model/parsers/[^/]+|harmony/[^/]+|tools/[^/]+)_test\.go$")

# Reasoning tags a generation prompt opens: when the output closes one it never opened, the prompt opened it.
THINK_TAGS = [("<think>", "</think>"), ("<|START_THINKING|>", "<|END_THINKING|>"), ("[THINK]", "[/THINK]")]
# The block a test's "thinking on" opens, by parser file; <think> elsewhere.
THINK_OPENER = {"cohere": THINK_TAGS[1], "ministral": THINK_TAGS[2]}



class Unreadable(Exception):
    """Go text this reader does not evaluate; the message is the skip reason."""


# ---- Go tokens -------------------------------------------------------------------------------------

@dataclass
class Tok:
    kind: str  # str, num, rune, ident, op
    value: Any
    line: int


_ESC = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92, "'": 39, '"': 34}
_OPS = [":=", "...", "==", "!=", "<=", ">=", "&&", "||", "<-", "++", "--", "+=", "-="]


def _unquote(body: str) -> str:
    """An interpreted Go string's body: escapes to bytes (\\x and octal are bytes), decoded as UTF-8."""
    out = bytearray()
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        e = body[i + 1]
        if e in _ESC:
            out.append(_ESC[e])
            i += 2
        elif e == "x":
            out.append(int(body[i + 2 : i + 4], 16))
            i += 4
        elif e in "01234567":
            out.append(int(body[i + 1 : i + 4], 8) & 0xFF)
            i += 4
        elif e in "uU":
            n = 4 if e == "u" else 8
            out += chr(int(body[i + 2 : i + 2 + n], 16)).encode("utf-8", "surrogatepass")
            i += 2 + n
        else:
            raise Unreadable("string escape")
    return out.decode("utf-8", "replace")


def tokenize(src: str) -> list[Tok]:
    toks: list[Tok] = []
    i, line, n = 0, 1, len(src)
    while i < n:
        c = src[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += src.count("\n", i, j)
            i = j
        elif c == "`":
            j = src.find("`", i + 1)
            j = n if j < 0 else j
            toks.append(Tok("str", src[i + 1 : j].replace("\r", ""), line))
            line += src.count("\n", i, j)
            i = j + 1
        elif c in "\"'":
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            body = src[i + 1 : j]
            try:
                s = _unquote(body)
            except (Unreadable, ValueError, IndexError):
                s = None
            if c == '"':
                toks.append(Tok("str", s, line))
            else:
                toks.append(Tok("rune", ord(s[0]) if s else 0, line))
            i = j + 1
        elif c.isdigit() or (c == "." and i + 1 < n and src[i + 1].isdigit()):
            m = re.compile(r"0[xX][0-9a-fA-F_]+|(\d[\d_]*)?\.?\d*([eE][+-]?\d+)?").match(src, i)
            text = m.group(0) if m and m.group(0) else c
            v: Any
            try:
                v = int(text.replace("_", ""), 0) if re.fullmatch(r"0[xX][0-9a-fA-F_]+|\d[\d_]*", text) else float(text)
            except ValueError:
                v = None
            toks.append(Tok("num", v, line))
            i += len(text)
        elif c.isalpha() or c == "_" or ord(c) > 127:
            j = i
            while j < n and (src[j].isalnum() or src[j] == "_" or ord(src[j]) > 127):
                j += 1
            toks.append(Tok("ident", src[i:j], line))
            i = j
        else:
            op = next((o for o in _OPS if src.startswith(o, i)), c)
            toks.append(Tok("op", op, line))
            i += len(op)
    return toks


# ---- Go expressions, as far as test tables need ---------------------------------------------------

# Nodes: ("str", s) ("num", v) ("ident", name) ("call", callee, [args]) ("comp", type, [elems])
# ("kv", key, value) ("bin", op, a, b) ("neg", x) ("ref", x) ("bad", reason)


class Parser:
    def __init__(self, toks: list[Tok]) -> None:
        self.t = toks
        self.i = 0

    def peek(self, k: int = 0) -> Tok | None:
        j = self.i + k
        return self.t[j] if j < len(self.t) else None

    def is_op(self, v: str, k: int = 0) -> bool:
        t = self.peek(k)
        return t is not None and t.kind == "op" and t.value == v

    def take(self) -> Tok:
        t = self.peek()
        if t is None:
            raise Unreadable("end of file")
        self.i += 1
        return t

    def expect(self, v: str) -> None:
        t = self.take()
        if t.kind != "op" or t.value != v:
            raise Unreadable(f"expected {v}")

    def skip_balanced(self) -> None:
        """Past a bracketed group starting at the current token."""
        pairs = {"(": ")", "[": "]", "{": "}"}
        stack = []
        while True:
            t = self.take()
            if t.kind == "op" and t.value in pairs:
                stack.append(pairs[t.value])
            elif t.kind == "op" and stack and t.value == stack[-1]:
                stack.pop()
                if not stack:
                    return

    def type_(self) -> Any:
        """A type: returns ("type", text, struct fields or None)."""
        t = self.peek()
        if t is None:
            raise Unreadable("end of file")
        if t.kind == "op" and t.value == "[":
            self.take()
            size = ""
            while not self.is_op("]"):
                size += str(self.take().value)
            self.take()
            inner = self.type_()
            return ("type", f"[{size}]" + inner[1], inner[2])
        if t.kind == "op" and t.value == "*":
            self.take()
            inner = self.type_()
            return ("type", "*" + inner[1], inner[2])
        if t.kind == "ident" and t.value == "map":
            self.take()
            self.expect("[")
            k = self.type_()
            self.expect("]")
            v = self.type_()
            return ("type", f"map[{k[1]}]{v[1]}", None)
        if t.kind == "ident" and t.value == "interface":
            self.take()
            self.skip_balanced()
            return ("type", "any", None)
        if t.kind == "ident" and t.value == "struct":
            self.take()
            start = self.i
            self.skip_balanced()
            return ("type", "struct", _struct_fields(self.t[start + 1 : self.i - 1]))
        if t.kind == "ident" and t.value == "func":
            self.take()
            self.skip_balanced()
            while self.peek() and not self.is_op("{") and self.peek().line == t.line:  # type: ignore[union-attr]
                self.take()
            return ("type", "func", None)
        if t.kind == "ident":
            name = self.take().value
            while self.is_op(".") and self.peek(1) and self.peek(1).kind == "ident":  # type: ignore[union-attr]
                self.take()
                name += "." + self.take().value
            return ("type", name, None)
        raise Unreadable("type")

    def elements(self) -> list[Any]:
        self.expect("{")
        out = []
        while not self.is_op("}"):
            v: Any
            if self.is_op("{"):
                v = ("comp", None, self.elements())
            else:
                v = self.expr()
            if self.is_op(":"):
                self.take()
                val = ("comp", None, self.elements()) if self.is_op("{") else self.expr()
                v = ("kv", v, val)
            out.append(v)
            if self.is_op(","):
                self.take()
            elif not self.is_op("}"):
                raise Unreadable("composite literal")
        self.take()
        return out

    def primary(self) -> Any:
        t = self.peek()
        if t is None:
            raise Unreadable("end of file")
        if t.kind == "str":
            self.take()
            return ("str", t.value) if t.value is not None else ("bad", "string escape")
        if t.kind in ("num", "rune"):
            self.take()
            return ("num", t.value)
        if t.kind == "op" and t.value == "(":
            self.take()
            e = self.expr()
            self.expect(")")
            return e
        if t.kind == "ident" and t.value == "func":
            self.take()
            self.skip_balanced()  # parameters
            while not self.is_op("{"):
                if self.is_op("("):
                    self.skip_balanced()
                else:
                    self.take()
            self.skip_balanced()  # body
            return ("bad", "func literal")
        if (t.kind == "op" and t.value in ("[", "*")) or (t.kind == "ident" and t.value in ("map", "struct", "interface")):
            ty = self.type_()
            if self.is_op("{"):
                return ("comp", ty, self.elements())
            if self.is_op("("):  # conversion
                self.take()
                e = self.expr()
                self.expect(")")
                return ("call", ty[1], [e])
            return ("bad", "type")
        if t.kind == "ident":
            ty = self.type_()
            # In a table any type name may open a literal (local types are lower-case).
            if self.is_op("{") and ty[1] not in ("if", "for", "switch", "else", "range", "return", "select"):
                return ("comp", ty, self.elements())
            return ("ident", ty[1])
        raise Unreadable(f"token {t.value!r}")

    def postfix(self) -> Any:
        e = self.primary()
        while True:
            if self.is_op("("):
                self.take()
                args = []
                while not self.is_op(")"):
                    args.append(self.expr())
                    if self.is_op("..."):
                        self.take()
                    if self.is_op(","):
                        self.take()
                self.take()
                e = ("call", e[1] if e[0] == "ident" else "?", args)
            elif self.is_op("."):
                self.take()
                e = ("ident", f"{e[1] if e[0] == 'ident' else '?'}.{self.take().value}")
            elif self.is_op("["):
                self.skip_balanced()
                e = ("bad", "index")
            else:
                return e

    def unary(self) -> Any:
        if self.is_op("-"):
            self.take()
            return ("neg", self.unary())
        if self.is_op("&"):
            self.take()
            return ("ref", self.unary())
        if self.is_op("!"):
            self.take()
            self.unary()
            return ("bad", "not")
        return self.postfix()

    def expr(self) -> Any:
        e = self.unary()
        while self.peek() and self.peek().kind == "op" and self.peek().value in ("+", "-", "*", "/", "==", "!=", "&&", "||", "<", ">"):  # type: ignore[union-attr]
            op = self.take().value
            e = ("bin", op, e, self.unary())
        return e


def _struct_fields(toks: list[Tok]) -> dict[str, str]:
    """A struct type's fields, one declaration a line: name -> type text."""
    fields: dict[str, str] = {}
    lines: dict[int, list[Tok]] = {}
    for t in toks:
        lines.setdefault(t.line, []).append(t)
    for group in lines.values():
        names = []
        k = 0
        while k < len(group) and group[k].kind == "ident":
            names.append(group[k].value)
            if k + 1 < len(group) and group[k + 1].kind == "op" and group[k + 1].value == ",":
                k += 2
            else:
                k += 1
                break
        ty = "".join(str(t.value) for t in group[k:])
        if len(names) > 1 and not ty:  # "name Type" read as two names
            ty = names.pop()
        for n in names:
            fields[n] = ty
    return fields


# ---- values ---------------------------------------------------------------------------------------

_NUM_CONV = {"float64", "float32", "int", "int64", "int32", "uint", "uint64"}


def value(node: Any, env: dict[str, Any]) -> Any:
    kind = node[0]
    if kind == "str" or kind == "num":
        return node[1]
    if kind == "bad":
        raise Unreadable(node[1])
    if kind == "neg":
        v = value(node[1], env)
        if isinstance(v, (int, float)):
            return -v
        raise Unreadable("negation")
    if kind == "ref":
        return value(node[1], env)
    if kind == "bin":
        if node[1] != "+":
            raise Unreadable(f"operator {node[1]}")
        a, b = value(node[2], env), value(node[3], env)
        if type(a) is not type(b) or not isinstance(a, (str, int, float)):
            raise Unreadable("operands")
        return a + b
    if kind == "ident":
        name = node[1]
        if name in ("true", "false"):
            return name == "true"
        if name == "nil":
            return None
        if name in env:
            return value(env[name], {k: v for k, v in env.items() if k != name})
        raise Unreadable(f"name {name}")
    if kind == "call":
        callee, args = node[1], node[2]
        if callee in _NUM_CONV and len(args) == 1:
            v = value(args[0], env)
            return float(v) if callee.startswith("float") else int(v)
        if callee in ("string", "[]byte", "json.RawMessage") and len(args) == 1:
            return value(args[0], env)
        if callee == "testArgs" and len(args) == 1:
            return value(args[0], env)
        if callee == "args" and len(args) == 1:
            try:
                return json.loads(value(args[0], env))
            except (TypeError, ValueError) as e:
                raise Unreadable("args(json)") from e
        if callee.endswith("NewToolCallFunctionArguments") and not args:
            return {}
        if callee in ("strings.Repeat",) and len(args) == 2:
            return value(args[0], env) * value(args[1], env)
        raise Unreadable(f"helper {callee}")
    if kind == "comp":
        ty = node[1][1] if node[1] else None
        elems = node[2]
        if ty is not None and ty.endswith("ToolCall") and not ty.endswith("[]api.ToolCall"):
            return tool_call(elems, env)
        if ty is not None and ty.startswith("[]") and ty.endswith("ToolCall"):
            return [tool_call(e[2] if e[0] == "comp" else _comp_elems(e), env) for e in elems]
        if ty is not None and ty.startswith("map["):
            return {str(value(e[1], env)): value(e[2], env) for e in elems if e[0] == "kv"}
        if ty is not None and ty.startswith("[]"):
            return [value(e, env) for e in elems]
        if ty is None and elems and all(e[0] == "kv" for e in elems):
            return {str(value(e[1], env)) if e[1][0] != "ident" else e[1][1]: value(e[2], env) for e in elems}
        if ty is None:
            return [value(e, env) for e in elems]
        raise Unreadable(f"literal {ty}")
    raise Unreadable(kind)


def _comp_elems(node: Any) -> list[Any]:
    if node[0] == "comp":
        return node[2]
    raise Unreadable("tool call")


def tool_call(elems: list[Any], env: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": None, "arguments": {}}
    for e in elems:
        if e[0] != "kv" or e[1][0] != "ident":
            raise Unreadable("tool call")
        if e[1][1] == "Function":
            for f in _comp_elems(e[2]):
                if f[0] != "kv":
                    raise Unreadable("tool call function")
                key = f[1][1]
                if key == "Name":
                    out["name"] = value(f[2], env)
                elif key == "Arguments":
                    out["arguments"] = value(f[2], env)
    if not isinstance(out["name"], str):
        raise Unreadable("tool call name")
    if not isinstance(out["arguments"], dict):
        raise Unreadable("tool call arguments")
    return out


# ---- cases ----------------------------------------------------------------------------------------

@dataclass
class Case:
    file: str
    where: str
    name: str
    text: str
    expect: list[dict[str, Any]] | None  # None: no call
    expect_error: bool = False
    partial_args: bool = False  # the test checks names and some arguments only
    think: bool = False  # the test turns thinking on: the output begins inside a reasoning block


@dataclass
class FileCases:
    path: str
    cases: list[Case] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (where, reason)


INPUT_FIELDS = ("input", "inputs", "chunks")


def _flatten(node: Any) -> list[Any]:
    """The identifier and literal leaves of a node, as tokens, to look for flags in a case."""
    out: list[Any] = []
    if isinstance(node, tuple):
        if node[0] == "ident":
            out.append(Tok("ident", node[1], 0))
        elif node[0] == "kv":
            out += _flatten(node[1]) + [Tok("op", ":", 0)] + _flatten(node[2])
        elif node[0] == "comp":
            if node[1]:
                out.append(Tok("ident", node[1][1], 0))
            out.append(Tok("op", "{", 0))
            for e in node[2]:
                out += _flatten(e)
            out.append(Tok("op", "}", 0))
        else:
            for part in node[1:]:
                if isinstance(part, (tuple, list)):
                    out += _flatten(part)
    elif isinstance(node, list):
        for e in node:
            out += _flatten(e)
    return out


def _calls_field(fields: dict[str, str]) -> str | None:
    for name, ty in fields.items():
        if ty.lstrip("[]*").endswith("ToolCall"):
            return name
    return None


def _bindings(toks: list[Tok]) -> dict[str, Any]:
    """Names bound to expressions anywhere in the file (``x := ...``, ``const x = ...``, ``var x = ...``)."""
    env: dict[str, Any] = {}
    for k in range(len(toks) - 2):
        a, b = toks[k], toks[k + 1]
        if a.kind == "ident" and b.kind == "op" and b.value in (":=", "="):
            prev = toks[k - 1] if k else None
            if b.value == "=" and not (prev and prev.kind == "ident" and prev.value in ("const", "var")):
                continue
            p = Parser(toks)
            p.i = k + 2
            try:
                env.setdefault(a.value, p.expr())
            except (Unreadable, IndexError, AttributeError):
                pass
    return env


def _steps_cases(path: str, elems: list[Any], env: dict[str, Any], out: FileCases) -> list[Case]:
    """A table of streaming steps (``{input, wantEvents}``): the output is the steps' inputs joined,
    the calls expected the ``...EventToolCall{name, args}`` events (args a JSON text); a case whose
    events are of other kinds than content, thinking and such calls is skipped."""
    cases = []
    for el in elems:
        kv = {e[1][1]: e[2] for e in el[2] if e[0] == "kv" and e[1][0] == "ident"} if el[0] == "comp" else {}
        try:
            cname = str(value(kv["desc"] if "desc" in kv else kv["name"], env))
        except (KeyError, Unreadable):
            cname = "?"
        where = f"{path}: {cname}"
        try:
            steps = kv.get("steps")
            if steps is None or steps[0] != "comp":
                raise Unreadable("steps")
            text, expect = "", []
            for st in steps[2]:
                skv = {e[1][1]: e[2] for e in st[2] if e[0] == "kv" and e[1][0] == "ident"} if st[0] == "comp" else {}
                text += _input_text(skv["input"], env) if "input" in skv else ""
                events = skv.get("wantEvents", ("comp", None, []))
                for ev in events[2] if events[0] == "comp" else []:
                    kind = str(ev[1][1]) if ev[0] == "comp" and ev[1] else ""
                    fields = {e[1][1]: e[2] for e in ev[2] if e[0] == "kv" and e[1][0] == "ident"} if ev[0] == "comp" else {}
                    if kind.endswith("EventToolCall") and "name" in fields:
                        args = value(fields["args"], env) if "args" in fields else "{}"
                        expect.append({"name": value(fields["name"], env), "arguments": json.loads(args)})
                    elif "RawToolCall" in kind:
                        raise Unreadable("raw tool-call events (the text inside the tags)")
                    elif not re.search(r"Event(Content|Thinking)$", kind):
                        raise Unreadable("events of an internal state machine")
        except (Unreadable, KeyError, ValueError, TypeError) as e:
            out.skipped.append((where, str(e) if isinstance(e, Unreadable) else "steps"))
            continue
        flat = "".join(str(t.value) for t in _flatten(el))
        cases.append(Case(path, where, cname, text, expect or None, think=_thinks(flat)))
    return cases


def _feeds_parser(toks: list[Tok], k: int) -> bool:
    """Whether the test running a table (from it to the next test function) feeds a parser's Add."""
    for j in range(k, len(toks) - 1):
        t = toks[j]
        if t.kind == "ident" and t.value == "func" and str(toks[j + 1].value).startswith("Test"):
            return False
        if t.kind == "ident" and t.value == "Add" and toks[j - 1].value == "." and toks[j + 1].value == "(":
            return True
    return False


def _input_text(node: Any, env: dict[str, Any]) -> str:
    v = value(node, env)
    if isinstance(v, list) and all(isinstance(s, str) for s in v):
        return "".join(v)
    if isinstance(v, str):
        return v
    raise Unreadable("input")


def read_file(path: str, src: str) -> FileCases:
    out = FileCases(path)
    toks = tokenize(src)
    env = _bindings(toks)
    k = 0
    while k < len(toks) - 3:
        # a table: []struct{...}{...}
        if not (toks[k].kind == "op" and toks[k].value == "[" and toks[k + 1].value == "]" and toks[k + 2].value == "struct"):
            k += 1
            continue
        p = Parser(toks)
        p.i = k
        try:
            ty = p.type_()
            fields = ty[2] or {}
            if not p.is_op("{"):
                k = p.i
                continue
            start_line = toks[p.i].line
            elems = p.elements()
        except (Unreadable, IndexError, AttributeError):
            k += 3
            continue
        k = p.i
        inp = next((f for f in INPUT_FIELDS if f in fields), None)
        calls = _calls_field(fields)
        if calls is None and "steps" in fields:
            out.cases.extend(_steps_cases(path, elems, env, out))
            continue
        if calls is None:
            continue  # a table that expects no tool calls tests something else
        feeds_parser = _feeds_parser(toks, k)
        for el in elems:
            where = f"{path}:{start_line}"
            kv = {e[1][1]: e[2] for e in el[2] if e[0] == "kv" and e[1][0] == "ident"} if el[0] == "comp" else {}
            name = kv.get("name") or kv.get("desc")
            try:
                cname = str(value(name, env)) if name else "?"
            except Unreadable:
                cname = "?"
            where = f"{path}: {cname}"
            if not feeds_parser:
                out.skipped.append((where, "no model output (an inner function's input)"))
                continue
            if inp is None or inp not in kv:
                reason = "steps of an internal state machine" if "steps" in kv else "no model output (an inner function's input)"
                out.skipped.append((where, reason))
                continue
            try:
                text = _input_text(kv[inp], env)
                exp = value(kv[calls], env) if calls in kv else None
                if isinstance(exp, dict):
                    exp = [exp]
                if exp == []:
                    exp = None
                err = False
                for ef in ("expectError", "wantErr", "expectErr"):
                    if ef in kv:
                        err = bool(value(kv[ef], env))
            except Unreadable as e:
                out.skipped.append((where, str(e)))
                continue
            if fields.get("tools") is None and False:
                pass
            flat_case = "".join(str(t.value) for t in _flatten(el))
            out.cases.append(Case(path, where, cname, text, exp, err, think=_thinks(flat_case)))
    out.cases.extend(_imperative(path, toks, env, out))
    return out


def _imperative(path: str, toks: list[Tok], env: dict[str, Any], out: FileCases) -> list[Case]:
    """Tests with no table: the output is what one ``.Add(...)`` call is given (or the one ``[]string``
    of chunks a helper feeds it); the calls expected are a ``[]api.ToolCall`` bound to a name, or read
    from ``len(calls) != N`` and the ``calls[i].Function.Name`` / ``Arguments.Get`` checks (the names
    and the arguments checked, no more); a test that only checks ``err == nil`` fails expects none."""
    cases = []
    funcs = [k for k, t in enumerate(toks) if t.kind == "ident" and t.value == "func" and k + 1 < len(toks) and str(toks[k + 1].value).startswith("Test")]
    for n, start in enumerate(funcs):
        end = funcs[n + 1] if n + 1 < len(funcs) else len(toks)
        body = toks[start:end]
        flat = "".join(str(t.value) if t.kind != "str" else json.dumps(t.value) for t in body)
        chunk_slices = [j for j in range(len(body) - 3) if body[j].value == "[" and body[j + 1].value == "]" and body[j + 2].value == "string" and body[j + 3].value == "{"]
        if "[]struct{" in flat or (".Add(" not in flat and len(chunk_slices) != 1) or "calls" not in flat:
            continue
        where = f"{path}: {body[1].value}"
        local = dict(env)
        local.update({k: v for k, v in _bindings(body).items()})
        adds = [j + 2 for j in range(len(body) - 2) if body[j].value == "." and body[j + 1].value == "Add" and body[j + 2].value == "("]
        texts: list[str | None] = []
        for j in adds:
            p = Parser(body)
            p.i = j + 1
            try:
                texts.append(_input_text(p.expr(), local))
            except (Unreadable, IndexError):
                texts.append(None)
        if None in texts or not texts:
            if len(adds) <= 1 and len(chunk_slices) == 1:
                p = Parser(body)
                p.i = chunk_slices[0]
                try:
                    texts = [_input_text(p.expr(), local)]
                except (Unreadable, IndexError):
                    out.skipped.append((where, "input"))
                    continue
            else:
                out.skipped.append((where, "input"))
                continue
        if len(texts) > 1:
            out.skipped.append((where, "streaming, checked chunk by chunk"))
            continue
        want = next((v for name, v in _bindings(body).items() if name in ("want", "expected", "wantCalls", "expectedCalls") and v[0] == "comp" and v[1] and str(v[1][1]).endswith("[]api.ToolCall")), None)
        counts = re.findall(r"len\(calls\)!=(\d+)", flat)
        partial = False
        try:
            if want is not None:
                exp = value(want, local) or None
            elif len(counts) == 1:
                count = int(counts[0])
                names: dict[int, str] = {}
                for nm in re.finditer(r'calls\[(\d+)\]\.Function\.Name!=("(?:[^"\\]|\\.)*")', flat):
                    names[int(nm.group(1))] = json.loads(nm.group(2))
                got_args: dict[int, dict[str, Any]] = {}
                for am in re.finditer(r'(\w+),ok:=calls\[(\d+)\]\.Function\.Arguments\.Get\(("(?:[^"\\]|\\.)*")\)(?:;|\n)?if!ok\|\|\1!=("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false)', flat):
                    got_args.setdefault(int(am.group(2)), {})[json.loads(am.group(3))] = json.loads(am.group(4))
                exp = [{"name": names.get(i), "arguments": got_args.get(i, {})} for i in range(count)] or None
                partial = True
            elif not counts and "err==nil" in flat and "calls" not in flat.replace("ToolCall", ""):
                exp = None
            else:
                out.skipped.append((where, "expected calls not read"))
                continue
        except Unreadable as e:
            out.skipped.append((where, str(e)))
            continue
        err = "err==nil" in flat and want is None and not counts
        cases.append(Case(path, where, str(body[1].value), texts[0] or "", exp, expect_error=err, partial_args=partial, think=_thinks(flat)))
    return cases


def _thinks(flat: str) -> bool:
    """Whether a test turns thinking on, so that the prompt opened the reasoning block."""
    return bool(re.search(r"ThinkValue\{Value:true\}|hasThinking:true|think:true", flat))


# ---- scoring --------------------------------------------------------------------------------------


def reopen_thinking(case: Case) -> tuple[str, str | None]:
    """The output with the reasoning block the prompt opened put back, and the closer looked for."""
    text = case.text
    for open_, close in THINK_TAGS:
        c = text.find(close)
        if c >= 0 and open_ not in text[:c]:
            return open_ + text, close
    if case.think:
        open_, close = next((t for f, t in THINK_OPENER.items() if f in case.file), THINK_TAGS[0])
        if not any(text.lstrip().startswith(o) for o, _ in THINK_TAGS):
            return open_ + text, close
    return text, None


def judged_wrong(case: Case, got: list[dict[str, Any]], closer: str | None) -> str | None:
    """Why Ollama's expectation is wrong for tool calls, when it is: a call expected from inside the
    reasoning block the prompt opened (toolmend never runs what a model only thinks)."""
    if closer is None or not case.expect or got:
        return None
    c = case.text.find(closer)
    inside = case.text if c < 0 else case.text[:c]
    if any(e["name"] and e["name"] in inside for e in case.expect):
        return "runs a call written inside reasoning (the prompt opened the think block" + (", never closed)" if c < 0 else ")")
    return None


def read_calls(text: str) -> tuple[list[dict[str, Any]], bool]:
    import toolmend

    r = toolmend.parse_response({"message": {"role": "assistant", "content": text}})
    return [{"name": c.name, "arguments": c.arguments} for c in r.calls], bool(r.errors)


def met(case: Case, got: list[dict[str, Any]], errors: bool) -> bool:
    if case.expect is None:
        return not got and (case.expect_error or not errors)
    if len(got) != len(case.expect):
        return False
    for g, e in zip(got, case.expect):
        if e["name"] is not None and g["name"] != e["name"]:
            return False
        if case.partial_args:
            if not all(k in g["arguments"] and same(g["arguments"][k], v) for k, v in e["arguments"].items()):
                return False
        elif not same(g["arguments"], e["arguments"]):
            return False
    return True


def main(argv: list[str]) -> int:
    spec = os.environ.get(ENV)
    verbose, dump = False, None
    args = iter(argv)
    for arg in args:
        if arg == "-v":
            verbose = True
        elif arg == "--ollama":
            spec = next(args, None)
        elif arg == "--json":
            dump = next(args, None)
        else:
            print(__doc__)
            return 2
    if not spec or not os.path.isdir(spec.partition("@")[0]):
        print(f"ollama: no snapshot (pass --ollama DIR or set {ENV}); nothing measured")
        return 0
    snap = Snapshot(spec, PINNED)
    files = [read_file(p, snap.read(p)) for p in snap.files() if FILES.match(p)]
    import toolmend

    print(f"toolmend {getattr(toolmend, '__version__', '?')}; ollama commit {snap.commit}")
    print()
    print("| file | cases | read | met |")
    print("|---|---:|---:|---:|")
    rows = []
    total = [0, 0, 0]
    for fc in files:
        results = []
        for c in fc.cases:
            text, closer = reopen_thinking(c)
            got, errors = read_calls(text)
            ok = met(c, got, errors)
            results.append((c, text, got, errors, ok, None if ok else judged_wrong(c, got, closer)))
        rows.append((fc, results))
        n_cases, n_read = len(fc.cases) + len(fc.skipped), len(fc.cases)
        n_met = sum(r[4] for r in results)
        total = [total[0] + n_cases, total[1] + n_read, total[2] + n_met]
        if n_cases:
            cell = f"{n_met / n_read:.1%}" if n_read else "n/a"
            print(f"| {fc.path} | {n_cases} | {n_read} | {cell} |")
    print(f"| overall | {total[0]} | {total[1]} | {total[2] / max(total[1], 1):.1%} |")
    print()
    reasons: dict[str, int] = {}
    for fc in files:
        for _, r in fc.skipped:
            reasons[r] = reasons.get(r, 0) + 1
    print("skipped: " + (", ".join(f"{r} {n}" for r, n in sorted(reasons.items(), key=lambda x: -x[1])) or "none"))
    wrong = [r for _, results in rows for r in results if r[5]]
    if wrong:
        print("\njudged wrong for tool calls (counted as misses):")
        for c, text, *_rest, why in wrong:
            print(f"  {c.where}: {why}" + (f"\n    {text!r}" if verbose else ""))
    if verbose:
        for fc, results in rows:
            missed = [r for r in results if not r[4] and not r[5]]
            if missed:
                print(f"\n## {fc.path} ({len(missed)} of {len(results)} missed)")
            for c, text, got, errors, _, _ in missed:
                print(f"  {c.where}: {text!r}\n    expected {json.dumps(c.expect, ensure_ascii=False)}\n    toolmend {json.dumps(got, ensure_ascii=False)}{' (errors)' if errors else ''}")
        print()
        for fc in files:
            for where, reason in fc.skipped:
                print(f"  skipped {where}: {reason}")
    if dump:
        with open(dump, "w", encoding="utf-8") as fh:
            json.dump(
                {
                    "commit": snap.commit,
                    "cases": [
                        {"where": c.where, "text": text, "expect": c.expect, "got": got, "errors": errors, "met": ok, "judged_wrong": why}
                        for _, results in rows
                        for c, text, got, errors, ok, why in results
                    ],
                    "skipped": [{"where": w, "reason": r} for fc in files for w, r in fc.skipped],
                },
                fh,
                ensure_ascii=False,
                indent=1,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
