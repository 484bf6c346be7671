"""The peers' own test suites as an external benchmark: run in sessions, not in CI (no test runs it).

json_repair's Python tests (tests/test_*.py: ``repair_json(...) == expected`` assertions, read with ``ast``,
never imported) and jsonrepair's TypeScript tests (src/**/*.test.ts: ``assertRepair(x)``,
``expect(jsonrepair(x)).toBe(y)``, ``expect(() => jsonrepair(x)).toThrow()``, read from the file's text with a
small tokenizer for TS string literals) are read where they lie, in snapshots of the two repositories; no case
is copied here. Each case is scored by JSON value: the expected output is parsed with ``json.loads`` (or is the
Python value the test compares), and an expected failure (a throw, or json_repair's ``""`` for "nothing to
repair") is met by a reader that raises, returns no text, or returns the empty string.

    python benches/peer_suites.py --json-repair DIR --jsonrepair DIR [-v] [--json OUT]
    TOOLMEND_JSON_REPAIR_REPO=DIR TOOLMEND_JSONREPAIR_REPO=DIR python benches/peer_suites.py

DIR is a bare git directory or a work tree (git is used either way); ``DIR@COMMIT`` reads that commit, else
the commit pinned below when the snapshot has it, else HEAD. The commit read is printed. Without either
snapshot the script says so and exits 0. ``-v`` lists the cases toolmend.loads misses, by family (the test
function, or the describe block and test name).
"""

from __future__ import annotations

import ast
import itertools
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

# The commits the figures in benches/README.md were measured at.
PINNED = {
    "json_repair": "600ede6be7d125d14812be3bbd7ef3e0b526a84e",
    "jsonrepair": "72ccb43aa612b9c38144ed66b23648a253713216",
}
ENV = {"json_repair": "TOOLMEND_JSON_REPAIR_REPO", "jsonrepair": "TOOLMEND_JSONREPAIR_REPO"}


class _Fail:
    """The expectation (or the result) that nothing is read: a throw, or no text."""

    def __repr__(self) -> str:
        return "FAIL"


FAIL: Any = _Fail()


@dataclass
class Case:
    suite: str
    where: str  # file:line
    family: str
    text: str
    expect: Any  # a JSON value, or FAIL
    text_output: bool  # the suite compares text output (repair), not objects (loads)


@dataclass
class Suite:
    name: str
    commit: str
    cases: list[Case] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (family, reason)
    assertions: int = 0  # before duplicates were merged


# ---- reading a snapshot --------------------------------------------------------------------------


class Snapshot:
    def __init__(self, spec: str, pinned: str | None) -> None:
        path, _, commit = spec.partition("@")
        self.path = path
        self._git = ["git", f"--git-dir={path}"] if _is_bare(path) else ["git", "-C", path]
        if not commit and pinned and self._run("cat-file", "-e", pinned + "^{commit}", check=False) is not None:
            commit = pinned
        self.commit = (self._run("rev-parse", (commit or "HEAD") + "^{commit}") or "").strip()

    def _run(self, *args: str, check: bool = True) -> str | None:
        run = subprocess.run(self._git + list(args), capture_output=True, text=True, encoding="utf-8")
        if run.returncode != 0:
            if check:
                raise RuntimeError(f"git {' '.join(args)}: {run.stderr.strip()}")
            return None
        return run.stdout

    def files(self) -> list[str]:
        return (self._run("ls-tree", "-r", "--name-only", self.commit) or "").splitlines()

    def read(self, path: str) -> str:
        return self._run("show", f"{self.commit}:{path}") or ""


def _is_bare(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "HEAD")) and os.path.isdir(os.path.join(path, "objects"))


# ---- json_repair's Python tests, read with ast -----------------------------------------------------


class Unreadable(Exception):
    """An expression this reader does not evaluate (it never runs the test's code)."""


@dataclass
class Pending:
    """A repair_json call bound to a name, waiting for the assertion that compares it."""

    call: ast.Call
    env: dict[str, Any]
    part: int | None = None  # 0: the value of a (value, logs) pair
    used: bool = False


_STR_METHODS = {"strip", "lstrip", "rstrip", "replace", "join", "format", "lower", "upper"}


def _eval(node: ast.AST, env: dict[str, Any]) -> Any:
    """A literal expression: constants, containers, names bound to literals, + and * on them, f-strings."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        if any(isinstance(e, ast.Starred) for e in node.elts):
            raise Unreadable("starred")
        items = [_eval(e, env) for e in node.elts]
        return list(items) if isinstance(node, ast.List) else tuple(items) if isinstance(node, ast.Tuple) else set(items)
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise Unreadable("dict unpacking")
        return {_eval(k, env): _eval(v, env) for k, v in zip(node.keys, node.values) if k is not None}
    if isinstance(node, ast.Name):
        if node.id in env and not isinstance(env[node.id], Pending):
            return env[node.id]
        raise Unreadable(f"name {node.id}")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Not)):
        v = _eval(node.operand, env)
        if isinstance(node.op, ast.Not):
            return not v
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return -v if isinstance(node.op, ast.USub) else v
        raise Unreadable("unary")
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult)):
        a: Any = _eval(node.left, env)
        b: Any = _eval(node.right, env)
        try:
            return a + b if isinstance(node.op, ast.Add) else a * b
        except (TypeError, ValueError, OverflowError, MemoryError) as e:
            raise Unreadable("operands") from e
    if isinstance(node, ast.JoinedStr):
        out = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                out.append(str(part.value))
            elif isinstance(part, ast.FormattedValue) and part.format_spec is None:
                v = _eval(part.value, env)
                out.append(repr(v) if part.conversion == ord("r") else str(v))
            else:
                raise Unreadable("f-string")
        return "".join(out)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _STR_METHODS:
        target = _eval(node.func.value, env)
        if isinstance(target, str) and not node.keywords:
            return getattr(target, node.func.attr)(*[_eval(a, env) for a in node.args])
    if isinstance(node, ast.Call) and _callee(node) == "dedent" and len(node.args) == 1:
        import textwrap

        return textwrap.dedent(_eval(node.args[0], env))
    raise Unreadable(type(node).__name__)


def _callee(node: ast.Call) -> str:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def _is_subject(node: ast.AST) -> bool:
    """A call of json_repair's repair_json or loads (not json.loads)."""
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    if isinstance(f, ast.Name):
        return f.id in ("repair_json", "loads")
    if isinstance(f, ast.Attribute):
        if f.attr == "repair_json":
            return True
        return f.attr == "loads" and isinstance(f.value, ast.Name) and f.value.id != "json"
    return False


def _subject_calls(node: ast.AST) -> list[ast.Call]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Call) and _is_subject(n)]


_TEXT_ONLY_OPTIONS = {"skip_json_loads", "ensure_ascii", "indent", "separators", "sort_keys"}


def _options_reason(opts: dict[str, Any]) -> str | None:
    """Why a call's options have no toolmend equivalent, or None when loads/repair is the same reading."""
    for key, value in opts.items():
        if key in _TEXT_ONLY_OPTIONS or key in ("return_objects", "logging"):
            continue
        if key == "stream_stable":
            if value:
                return "stream_stable=True (a partial stream read stably)"
            continue
        if key == "strict":
            if value:
                return "strict=True (refuse where it would mend)"
            continue
        if key in ("schema", "schema_repair_mode"):
            return "schema-guided repair"
        if key in ("json_fd", "chunk_length"):
            return "reads a file"
        return f"option {key}"
    return None


class _PyReader:
    def __init__(self, suite: Suite, path: str, tree: ast.Module) -> None:
        self.suite, self.path = suite, path
        self.helpers = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("test")}
        self.site: int | None = None  # the line of the helper call a case came through

    def skip(self, family: str, node: ast.AST, reason: str) -> None:
        for _ in _subject_calls(node):
            self.suite.skipped.append((family, reason))

    def test(self, fn: ast.FunctionDef, prefix: str = "") -> None:
        family = prefix + fn.name
        try:
            bindings = list(self._parametrize(fn))
        except Unreadable:
            for stmt in fn.body:
                self.skip(family, stmt, "parameters not literal")
            return
        for env in bindings:
            pending: list[Pending] = []
            self.block(fn.body, env, family, pending, depth=0)
            for p in pending:
                if not p.used:
                    self.skip(family, p.call, "no expected value")

    def _parametrize(self, fn: ast.FunctionDef) -> Iterator[dict[str, Any]]:
        axes: list[list[dict[str, Any]]] = []
        for dec in fn.decorator_list:
            if isinstance(dec, ast.Call) and _callee(dec) == "parametrize":
                names_node, values_node = dec.args[0], dec.args[1]
                names = _eval(names_node, {})
                names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
                values = []
                for item in values_node.elts if isinstance(values_node, (ast.List, ast.Tuple)) else []:
                    if isinstance(item, ast.Call) and _callee(item) == "param":
                        item = ast.Tuple(elts=item.args, ctx=ast.Load())
                    v = _eval(item, {})
                    values.append(dict(zip(names, v if len(names) > 1 else [v])))
                if not isinstance(values_node, (ast.List, ast.Tuple)):
                    raise Unreadable("parametrize values")
                axes.append(values)
        for combo in itertools.product(*axes):
            env: dict[str, Any] = {}
            for part in combo:
                env.update(part)
            yield env

    def block(self, stmts: list[ast.stmt], env: dict[str, Any], family: str, pending: list[Pending], depth: int) -> None:
        for stmt in stmts:
            self.stmt(stmt, env, family, pending, depth)

    def stmt(self, stmt: ast.stmt, env: dict[str, Any], family: str, pending: list[Pending], depth: int) -> None:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
            if _is_subject(value):
                assert isinstance(value, ast.Call)
                if isinstance(target, ast.Name):
                    p = Pending(value, dict(env))
                    env[target.id] = p
                    pending.append(p)
                    return
                if isinstance(target, ast.Tuple) and target.elts and isinstance(target.elts[0], ast.Name):
                    p = Pending(value, dict(env), part=0)
                    env[target.elts[0].id] = p
                    pending.append(p)
                    for other in target.elts[1:]:
                        if isinstance(other, ast.Name):
                            env.pop(other.id, None)
                    return
            names = [t.id for t in ast.walk(target) if isinstance(t, ast.Name)]
            try:
                v = _eval(value, env)
                if isinstance(target, ast.Name):
                    env[target.id] = v
                elif isinstance(target, ast.Tuple) and all(isinstance(t, ast.Name) for t in target.elts):
                    for t, item in zip(target.elts, v):
                        assert isinstance(t, ast.Name)
                        env[t.id] = item
                else:
                    raise Unreadable("target")
            except (Unreadable, TypeError, ValueError):
                for n in names:
                    env.pop(n, None)
                self.skip(family, value, "input not a literal")
            return
        if isinstance(stmt, ast.Assert):
            self.assertion(stmt, env, family, pending)
            return
        if isinstance(stmt, ast.With):
            raises = any(isinstance(i.context_expr, ast.Call) and _callee(i.context_expr) == "raises" for i in stmt.items)
            for inner in stmt.body:
                if raises and isinstance(inner, ast.Expr) and _is_subject(inner.value):
                    assert isinstance(inner.value, ast.Call)
                    self.case(inner.value, env, FAIL, family, value_mode=None)
                else:
                    self.stmt(inner, env, family, pending, depth)
            return
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            name = _callee(call)
            if isinstance(call.func, ast.Name) and name in self.helpers and depth < 4:
                helper = self.helpers[name]
                params = [a.arg for a in helper.args.args]
                try:
                    bound = {p: _eval(a, env) for p, a in zip(params, call.args)}
                    bound.update({k.arg: _eval(k.value, env) for k in call.keywords if k.arg})
                except Unreadable:
                    self.skip(family, helper, "input not a literal")
                    return
                sub: list[Pending] = []
                outer, self.site = self.site, self.site or stmt.lineno
                self.block(helper.body, bound, family, sub, depth + 1)
                self.site = outer
                for p in sub:
                    if not p.used:
                        self.skip(family, p.call, "no expected value")
                return
            if _is_subject(call):
                self.skip(family, call, "no expected value")
                return
        if isinstance(stmt, ast.For) and isinstance(stmt.target, (ast.Name, ast.Tuple)):
            try:
                items = list(_eval(stmt.iter, env))
            except (Unreadable, TypeError):
                self.skip(family, stmt, "loop over values not literal")
                return
            for item in items:
                loop_env = dict(env)
                if isinstance(stmt.target, ast.Name):
                    loop_env[stmt.target.id] = item
                else:
                    for t, v in zip(stmt.target.elts, item):
                        if isinstance(t, ast.Name):
                            loop_env[t.id] = v
                self.block(stmt.body, loop_env, family, pending, depth)
            return
        if isinstance(stmt, ast.If):
            try:
                branch = stmt.body if _eval(stmt.test, env) else stmt.orelse
            except Unreadable:
                self.skip(family, stmt, "condition not literal")
                return
            self.block(branch, env, family, pending, depth)
            return
        if _subject_calls(stmt):
            self.skip(family, stmt, "statement shape not read")

    def assertion(self, stmt: ast.Assert, env: dict[str, Any], family: str, pending: list[Pending]) -> None:
        test = stmt.test
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.Is)):
            left, right = test.left, test.comparators[0]
            sides = [(left, right), (right, left)]
            for subject, other in sides:
                call, part, bound_env = None, None, env
                if _is_subject(subject):
                    assert isinstance(subject, ast.Call)
                    call = subject
                elif isinstance(subject, ast.Name) and isinstance(env.get(subject.id), Pending):
                    p = env[subject.id]
                    p.used = True
                    call, part, bound_env = p.call, p.part, p.env
                if call is None:
                    continue
                if _is_subject(other) or (isinstance(other, ast.Name) and isinstance(env.get(other.id), Pending)):
                    self.skip(family, call, "expected computed by the peer itself")
                    return
                try:
                    expected = _eval(other, env)
                except Unreadable:
                    self.skip(family, call, "expected not a literal")
                    return
                if isinstance(test.ops[0], ast.Is) and expected is not None:
                    self.skip(family, call, "identity check")
                    return
                self.case(call, bound_env, expected, family, value_mode=part)
                return
        if _subject_calls(test):
            self.skip(family, test, "asserts no value (truthiness)")
        else:
            for node in ast.walk(test):
                if isinstance(node, ast.Name) and isinstance(env.get(node.id), Pending):
                    env[node.id].used = True
                    self.skip(family, env[node.id].call, "asserts no value (a property of the result)")

    def case(self, call: ast.Call, env: dict[str, Any], expected: Any, family: str, value_mode: int | None) -> None:
        named = [k.arg for k in call.keywords if k.arg]
        for option in ("schema", "schema_repair_mode", "json_fd", "chunk_length"):
            if option in named:  # the value may be a model class: the option alone decides
                self.suite.skipped.append((family, _options_reason({option: True}) or "options"))
                return
        try:
            if len(call.args) != 1 or any(k.arg is None for k in call.keywords):
                raise Unreadable("arguments")
            text = _eval(call.args[0], env)
            opts = {k.arg: _eval(k.value, env) for k in call.keywords if k.arg}
        except Unreadable:
            self.skip(family, call, "input not a literal")
            return
        if not isinstance(text, str):
            self.skip(family, call, "input not a string")
            return
        reason = _options_reason(opts)
        if reason:
            self.suite.skipped.append((family, reason))
            return
        objects = _callee(call) == "loads" or bool(opts.get("return_objects")) or bool(opts.get("logging"))
        if expected is not FAIL:
            if opts.get("logging") and value_mode is None:
                if not (isinstance(expected, tuple) and len(expected) == 2):
                    self.suite.skipped.append((family, "logging result not a (value, logs) pair"))
                    return
                expected = expected[0]
            if not objects:
                if not isinstance(expected, str):
                    self.suite.skipped.append((family, "expected text not a string"))
                    return
                if expected == "":
                    expected = FAIL
                else:
                    try:
                        expected = json.loads(expected)
                    except ValueError:
                        self.suite.skipped.append((family, "expected text is not JSON"))
                        return
            elif isinstance(expected, str) and expected == "":
                expected = FAIL  # json_repair's "nothing to repair"
            elif isinstance(expected, (set, tuple)):
                self.suite.skipped.append((family, "expected value not JSON"))
                return
        line = self.site or getattr(call, "lineno", 0)
        self.suite.cases.append(Case(self.suite.name, f"{self.path}:{line}", family, text, expected, not objects))


def read_json_repair(snap: Snapshot) -> Suite:
    suite = Suite("json_repair", snap.commit)
    for path in sorted(snap.files()):
        name = path.rsplit("/", 1)[-1]
        if not (path.startswith("tests/") and name.startswith("test_") and name.endswith(".py")):
            continue
        read_python_file(suite, path, snap.read(path))
    return suite


def read_python_file(suite: Suite, path: str, source: str) -> None:
    """Adds the cases of one pytest file of json_repair's (its text, parsed, never run) to suite."""
    tree = ast.parse(source, filename=path)
    reader = _PyReader(suite, path, tree)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            reader.test(node)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            for inner in node.body:
                if isinstance(inner, ast.FunctionDef) and inner.name.startswith("test"):
                    reader.test(inner, prefix=node.name + ".")


# ---- jsonrepair's TypeScript tests, read from the text ----------------------------------------------


@dataclass
class Tok:
    kind: str  # "str" (a literal: value set), "tmpl" (a template with ${}), "name", "num", "punct", "regex"
    text: str
    line: int
    value: str | None = None


_SIMPLE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", "v": "\v"}
_LINE_ENDS = "\n\r\u2028\u2029"
_REGEX_AFTER = set("(,=:[!&|?{};+-*%<>~^") | {"return", "typeof", "case", "do", "else", "in", "of"}


def _js_unescape(body: str) -> str:
    """The value of a JS string literal's body (UTF-16 surrogate pairs joined, as the engine sees them)."""
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        i += 1
        if i >= n:
            break
        c = body[i]
        if c in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[c])
            i += 1
        elif c == "0" and not (i + 1 < n and body[i + 1].isdigit()):
            out.append("\0")
            i += 1
        elif c == "x":
            out.append(chr(int(body[i + 1 : i + 3], 16)))
            i += 3
        elif c == "u" and i + 1 < n and body[i + 1] == "{":
            end = body.index("}", i)
            out.append(chr(int(body[i + 2 : end], 16)))
            i = end + 1
        elif c == "u":
            out.append(chr(int(body[i + 1 : i + 5], 16)))
            i += 5
        elif c == "\r":
            i += 2 if body[i + 1 : i + 2] == "\n" else 1  # a line continuation
        elif c in _LINE_ENDS:
            i += 1
        else:
            out.append(c)  # \' \" \\ \/ and any other character stand for themselves
            i += 1
    text = "".join(out)
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def ts_tokens(src: str) -> list[Tok]:
    """Tokens of a TS source: string literals decoded, templates without ${} as strings; comments dropped."""
    toks: list[Tok] = []
    i, n, line = 0, len(src), 1
    while i < n:
        c = src[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif src.startswith("//", i):
            end = src.find("\n", i)
            i = n if end < 0 else end
        elif src.startswith("/*", i):
            end = src.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += src.count("\n", i, end)
            i = end
        elif c in "'\"`":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            body = src[i + 1 : j]
            if c == "`" and "${" in body.replace("\\$", ""):
                toks.append(Tok("tmpl", src[i : j + 1], line))
            else:
                toks.append(Tok("str", src[i : j + 1], line, _js_unescape(body)))
            line += src.count("\n", i, j + 1)
            i = j + 1
        elif c == "/" and (not toks or toks[-1].text in _REGEX_AFTER):
            j, in_class = i + 1, False
            while j < n and src[j] != "\n" and (src[j] != "/" or in_class):
                if src[j] == "\\":
                    j += 1
                elif src[j] == "[":
                    in_class = True
                elif src[j] == "]":
                    in_class = False
                j += 1
            j += 1
            while j < n and (src[j].isalnum()):
                j += 1
            toks.append(Tok("regex", src[i:j], line))
            i = j
        elif c.isalpha() or c in "_$":
            j = i + 1
            while j < n and (src[j].isalnum() or src[j] in "_$"):
                j += 1
            toks.append(Tok("name", src[i:j], line))
            i = j
        elif c.isdigit():
            j = i + 1
            while j < n and (src[j].isalnum() or src[j] in "._"):
                j += 1
            toks.append(Tok("num", src[i:j], line))
            i = j
        else:
            three, two = src[i : i + 3], src[i : i + 2]
            op = three if three in ("===", "!==", "...") else two if two in ("=>", "==", "!=", "&&", "||", "??", "?.") else c
            toks.append(Tok("punct", op, line))
            i += len(op)
    return toks


_MATCHERS = {"toBe", "toEqual", "toStrictEqual"}
_SUBJECT_TS = "jsonrepair"


class _TsReader:
    def __init__(self, suite: Suite, path: str, toks: list[Tok]) -> None:
        self.suite, self.path, self.t = suite, path, toks
        self.match = self._pairs()
        self.blocks = self._blocks()  # (open, close, title, is_test)
        self.consts: dict[tuple[int, str], Any] = {}  # (scope open index, name) -> value or ("call", input)
        self.used: set[int] = set()

    def _pairs(self) -> dict[int, int]:
        stack, pairs = [], {}
        for k, tok in enumerate(self.t):
            if tok.kind == "punct" and tok.text in "([{":
                stack.append(k)
            elif tok.kind == "punct" and tok.text in ")]}" and stack:
                pairs[stack.pop()] = k
        return pairs

    def _blocks(self) -> list[tuple[int, int, str, bool]]:
        blocks = []
        for k, tok in enumerate(self.t):
            if tok.kind != "name" or tok.text not in ("describe", "test", "it"):
                continue
            j = k + 1
            while j < len(self.t):  # skip .each(...), .only, .skip
                if self.t[j].text == "." and j + 1 < len(self.t):
                    j += 2
                elif self.t[j].text == "(" and j + 1 < len(self.t) and self.t[j + 1].kind == "str":
                    blocks.append((j, self.match.get(j, len(self.t)), self.t[j + 1].value or "", tok.text != "describe"))
                    break
                elif self.t[j].text == "(":
                    j = self.match.get(j, j) + 1
                else:
                    break
        return blocks

    def family(self, k: int) -> str:
        titles = [title for open_, close, title, _ in self.blocks if open_ < k < close]
        return " > ".join(titles[1:] if len(titles) > 1 else titles)

    def scope(self, k: int) -> int:
        inner = [open_ for open_, close, _, _ in self.blocks if open_ < k < close]
        return max(inner) if inner else -1

    def expr(self, a: int, b: int) -> Any:
        """The value of tokens a..b-1: string literals and consts joined by +, in parentheses or not."""
        if a >= b:
            raise Unreadable("empty")
        if self.t[a].text == "(" and self.match.get(a) == b - 1:
            return self.expr(a + 1, b - 1)
        parts, k = [], a
        while k < b:
            tok = self.t[k]
            if tok.kind == "str":
                parts.append(tok.value)
            elif tok.kind == "name":
                value = self.lookup(k, tok.text)
                if not isinstance(value, str):
                    raise Unreadable(tok.text)
                parts.append(value)
            else:
                raise Unreadable(tok.text)
            k += 1
            if k < b:
                if self.t[k].text != "+":
                    raise Unreadable(self.t[k].text)
                k += 1
        return "".join(p or "" for p in parts)

    def lookup(self, k: int, name: str) -> Any:
        for open_, close, _, _ in sorted(self.blocks, key=lambda b: -b[0]):
            if open_ < k < close and (open_, name) in self.consts:
                return self.consts[(open_, name)]
        if (-1, name) in self.consts:
            return self.consts[(-1, name)]
        raise Unreadable(name)

    def args(self, open_: int) -> list[tuple[int, int]]:
        """The argument token ranges of the call whose ( is at open_."""
        close = self.match.get(open_, open_)
        spans, start, k = [], open_ + 1, open_ + 1
        while k < close:
            if self.t[k].text in "([{" and self.t[k].kind == "punct":
                k = self.match.get(k, k) + 1
                continue
            if self.t[k].text == ",":
                spans.append((start, k))
                start = k + 1
            k += 1
        if start < close:
            spans.append((start, close))
        return spans

    def arg_value(self, open_: int) -> Any:
        """The value of the one argument of the call whose ( is at open_, or the Unreadable that says why not."""
        spans = self.args(open_)
        try:
            return self.expr(*spans[0]) if len(spans) == 1 else Unreadable("arguments")
        except Unreadable as e:
            return e

    def subject_at(self, a: int, b: int) -> tuple[int, Any] | None:
        """(call index, input) when tokens a..b-1 are exactly jsonrepair(<expr>) or a const bound to one."""
        t = self.t
        if b - a >= 3 and t[a].text == _SUBJECT_TS and t[a + 1].text == "(" and self.match.get(a + 1) == b - 1:
            return a, self.arg_value(a + 1)
        if b - a == 1 and t[a].kind == "name":
            try:
                bound = self.lookup(a, t[a].text)
            except Unreadable:
                return None
            if isinstance(bound, tuple) and bound[0] == "call":
                return bound[1], bound[2]
        return None

    def add(self, k: int, call: int, text: Any, expected: Any) -> None:
        family = self.family(k)
        self.used.add(call)
        if isinstance(text, Unreadable) or isinstance(expected, Unreadable):
            self.suite.skipped.append((family, "input or expected not a literal"))
            return
        if expected is not FAIL:
            try:
                expected = json.loads(expected)
            except ValueError:
                self.suite.skipped.append((family, "expected text is not JSON"))
                return
        self.suite.cases.append(Case(self.suite.name, f"{self.path}:{self.t[k].line}", family, text, expected, True))

    def _statement_ends(self, a: int, b: int) -> bool:
        """Whether a statement started at a ends before token b: a ;, a closer, or a new line (no semicolons)."""
        t = self.t
        if t[b].kind == "punct" and t[b].text in (";", ")", "]", "}"):
            return True
        if b > a and t[b].line > t[b - 1].line:
            joins = ("+", "=", "(", ",", "?", ":", "[", "{", ".")
            return t[b - 1].text not in joins and t[b].text not in ("+", ".", "?", ":")
        return False

    def _function_bodies(self) -> list[tuple[int, int]]:
        """Token spans of named function declarations (helpers such as assertRepair): not test code."""
        spans = []
        for k, tok in enumerate(self.t):
            if tok.kind == "name" and tok.text == "function" and k + 2 < len(self.t) and self.t[k + 1].kind == "name":
                j = k + 2
                while j < len(self.t) and self.t[j].text != "{":
                    j = self.match.get(j, j) + 1 if self.t[j].text == "(" else j + 1
                if j < len(self.t):
                    spans.append((k, self.match.get(j, j)))
        return spans

    def read(self) -> None:
        t = self.t
        outside = self._function_bodies()
        for k, tok in enumerate(t):
            if tok.kind != "name" or any(a <= k <= b for a, b in outside):
                continue
            prev = t[k - 1].text if k else ""
            nxt = t[k + 1].text if k + 1 < len(t) else ""
            if tok.text in ("const", "let", "var") and k + 3 < len(t) and t[k + 1].kind == "name" and t[k + 2].text == "=":
                a = b = k + 3
                while b < len(t) and not self._statement_ends(a, b):
                    b = self.match.get(b, b) + 1 if t[b].kind == "punct" and t[b].text in "([{" else b + 1
                key = (self.scope(k), t[k + 1].text)
                sub = self.subject_at(a, b)
                if sub is not None:
                    self.consts[key] = ("call", sub[0], sub[1])
                else:
                    try:
                        self.consts[key] = self.expr(a, b)
                    except Unreadable:
                        self.consts.pop(key, None)
            elif tok.text == "assertRepair" and nxt == "(" and prev != "function":
                text = self.arg_value(k + 1)
                self.add(k, k, text, text)
            elif tok.text == "expect" and nxt == "(":
                self.expect(k)
        for k, tok in enumerate(t):
            if tok.kind == "name" and tok.text == _SUBJECT_TS and k + 1 < len(t) and t[k + 1].text == "(":
                inside = any(a <= k <= b for a, b in outside)
                if not inside and k not in self.used and self.scope(k) >= 0:
                    self.suite.skipped.append((self.family(k), "call shape not read"))

    def expect(self, k: int) -> None:
        t = self.t
        open_ = k + 1
        close = self.match.get(open_, open_)
        spans = self.args(open_)
        after = close + 1
        matcher = t[after + 1].text if after + 1 < len(t) and t[after].text == "." else ""
        if matcher == "not":
            return
        if matcher == "toThrow":
            for j in range(open_ + 1, close):
                if t[j].text == _SUBJECT_TS and t[j + 1].text == "(":
                    self.add(k, j, self.arg_value(j + 1), FAIL)
            return
        if not spans:
            return
        sub = self.subject_at(*spans[0])
        if sub is None:
            return
        call, text = sub
        if len(spans) > 1 and matcher not in _MATCHERS:
            self.used.add(call)
            self.suite.skipped.append((self.family(k), "expect(…, message) with no matcher"))
            return
        if matcher not in _MATCHERS or t[after + 2].text != "(":
            self.used.add(call)
            self.suite.skipped.append((self.family(k), f"matcher {matcher or 'missing'}"))
            return
        self.add(k, call, text, self.arg_value(after + 2))


def read_jsonrepair(snap: Snapshot) -> Suite:
    suite = Suite("jsonrepair", snap.commit)
    for path in sorted(snap.files()):
        if path.startswith("src/") and path.endswith(".test.ts"):
            read_ts_file(suite, path, snap.read(path))
    return suite


def read_ts_file(suite: Suite, path: str, source: str) -> None:
    """Adds the cases of one vitest file of jsonrepair's (its text, tokenized) to suite."""
    _TsReader(suite, path, ts_tokens(source)).read()


def dedupe(suite: Suite) -> Suite:
    """One case per (input, expected value): the suites assert some twice (options that do not change it)."""
    suite.assertions = len(suite.cases)
    seen: set[tuple[str, str]] = set()
    kept = []
    for case in suite.cases:
        key = (case.text, "FAIL" if case.expect is FAIL else json.dumps(case.expect, sort_keys=True))
        if key not in seen:
            seen.add(key)
            kept.append(case)
    suite.cases = kept
    return suite


# ---- readers and scoring -------------------------------------------------------------------------


def readers() -> dict[str, Callable[[str], Any]]:
    """Each reader as text -> value, FAIL when it reads nothing (raises, or gives no text)."""
    import toolmend

    def tm_repair(text: str) -> Any:
        r = toolmend.repair(text)
        return FAIL if r.error is not None or r.json is None else json.loads(r.json)

    found: dict[str, Callable[[str], Any]] = {"toolmend.loads": toolmend.loads, "toolmend.repair": tm_repair}

    def text_reader(fn: Callable[[str], str]) -> Callable[[str], Any]:
        def read(text: str) -> Any:
            out = fn(text)
            return FAIL if out == "" else json.loads(out)

        return read

    try:
        import json_repair

        found["json_repair"] = text_reader(json_repair.repair_json)
    except ImportError:
        pass
    try:
        import fast_json_repair

        found["fast_json_repair"] = text_reader(fast_json_repair.repair_json)
    except ImportError:
        pass
    try:
        import jsonmend

        found["jsonmend"] = text_reader(jsonmend.repair_json)
    except ImportError:
        pass
    return found


def run(read: Callable[[str], Any], text: str) -> Any:
    try:
        return read(text)
    except Exception:  # noqa: BLE001 - a reader that raises reads nothing
        return FAIL


def same(got: Any, expect: Any) -> bool:
    """Equal as JSON values: 1 == 1.0, True != 1; an expected failure is met by FAIL or the empty string."""
    if expect is FAIL:
        return got is FAIL or got == ""
    if got is FAIL:
        return False
    if isinstance(got, bool) or isinstance(expect, bool):
        return type(got) is type(expect) and got == expect
    if isinstance(got, dict) and isinstance(expect, dict):
        return got.keys() == expect.keys() and all(same(got[k], expect[k]) for k in got)
    if isinstance(got, list) and isinstance(expect, list):
        return len(got) == len(expect) and all(same(a, b) for a, b in zip(got, expect))
    numbers = (int, float)
    if type(got) in numbers and type(expect) in numbers:
        return bool(got == expect)
    return type(got) is type(expect) and bool(got == expect)


def keys_of(value: Any) -> set[str]:
    if isinstance(value, dict):
        out = set(value)
        for v in value.values():
            out |= keys_of(v)
        return out
    if isinstance(value, list):
        return set().union(*(keys_of(v) for v in value)) if value else set()
    return set()


def key_missing(got: Any, expect: Any) -> bool:
    """A key the suite expects (at any depth) is nowhere in the value read."""
    if expect is FAIL:
        return False
    want = keys_of(expect)
    return bool(want) and not want <= (set() if got is FAIL else keys_of(got))


def score(suites: list[Suite], found: dict[str, Callable[[str], Any]]) -> dict[str, dict[int, Any]]:
    """results[reader][case index] over every case of every suite, in order."""
    cases = [c for s in suites for c in s.cases]
    return {name: {i: run(read, c.text) for i, c in enumerate(cases)} for name, read in found.items()}


def _pct(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "n/a"


def report(suites: list[Suite], found: dict[str, Callable[[str], Any]], verbose: bool, dump: str | None) -> None:
    import toolmend

    cases = [c for s in suites for c in s.cases]
    results = score(suites, found)
    ok = {name: [same(results[name][i], c.expect) for i, c in enumerate(cases)] for name in found}
    versions = []
    for mod in ("json_repair", "fast_json_repair", "jsonmend"):
        try:
            from importlib.metadata import version

            versions.append(f"{mod} {version(mod)}")
        except Exception:  # noqa: BLE001
            pass
    print(f"toolmend {getattr(toolmend, '__version__', '?')} ({toolmend.__file__}); peers: {', '.join(versions)}")
    for s in suites:
        print(
            f"{s.name}: commit {s.commit}; {s.assertions} assertions read, {len(s.cases)} distinct cases, "
            f"{len(s.skipped)} skipped"
        )
    print()
    names = list(found)
    print("| suite | cases | " + " | ".join(names) + " |")
    print("|---|---:|" + "---:|" * len(names))
    rows: list[tuple[str, list[int]]] = []
    start = 0
    for s in suites:
        rows.append((f"{s.name}'s suite", list(range(start, start + len(s.cases)))))
        start += len(s.cases)
    rows.append(("overall", list(range(len(cases)))))
    rows.append(("of which the text-output cases", [i for i, c in enumerate(cases) if c.text_output]))
    rows.append(("of which expected failures", [i for i, c in enumerate(cases) if c.expect is FAIL]))
    for title, idx in rows:
        cells = [_pct(sum(ok[n][i] for i in idx), len(idx)) for n in names]
        print(f"| {title} | {len(idx)} | " + " | ".join(cells) + " |")
    missing = [sum(key_missing(results[n][i], c.expect) for i, c in enumerate(cases)) for n in names]
    print("| cases where a key the suite expects is missing | | " + " | ".join(str(m) for m in missing) + " |")
    print()
    for s in suites:
        reasons: dict[str, int] = {}
        for _, reason in s.skipped:
            reasons[reason] = reasons.get(reason, 0) + 1
        listed = ", ".join(f"{r} {n}" for r, n in sorted(reasons.items(), key=lambda x: -x[1]))
        print(f"skipped in {s.name}'s suite: {listed or 'none'}")
    if verbose:
        print()
        families: dict[tuple[str, str], list[int]] = {}
        for i, c in enumerate(cases):
            families.setdefault((c.suite, c.family), []).append(i)
        misses = [(key, [i for i in idx if not ok["toolmend.loads"][i]], len(idx)) for key, idx in families.items()]
        misses.sort(key=lambda m: (-len(m[1]), m[0]))
        for (suite, family), missed, total in misses:
            if not missed:
                continue
            print(f"## {suite}: {family} ({len(missed)} of {total} missed)")
            for i in missed:
                c = cases[i]
                print(f"  {c.where}: {c.text!r}\n    expected {_show(c.expect)}\n    toolmend {_show(results['toolmend.loads'][i])}")
    if dump:
        rows_out = [
            {
                "suite": c.suite,
                "where": c.where,
                "family": c.family,
                "text": c.text,
                "expect": _show(c.expect),
                **{n: {"ok": ok[n][i], "got": _show(results[n][i])} for n in names},
            }
            for i, c in enumerate(cases)
        ]
        with open(dump, "w", encoding="utf-8") as fh:
            json.dump({"suites": {s.name: s.commit for s in suites}, "cases": rows_out}, fh, ensure_ascii=False, indent=1)


def _show(value: Any) -> str:
    if value is FAIL:
        return "FAIL"
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def main(argv: list[str]) -> int:
    specs: dict[str, str | None] = {name: os.environ.get(var) for name, var in ENV.items()}
    verbose, dump = False, None
    args = iter(argv)
    for arg in args:
        if arg == "-v":
            verbose = True
        elif arg == "--json-repair":
            specs["json_repair"] = next(args)
        elif arg == "--jsonrepair":
            specs["jsonrepair"] = next(args)
        elif arg == "--json":
            dump = next(args)
        else:
            print(__doc__)
            return 2
    suites = []
    for name, read in (("json_repair", read_json_repair), ("jsonrepair", read_jsonrepair)):
        spec = specs[name]
        if not spec or not os.path.isdir(spec.partition("@")[0]):
            print(f"{name}: no snapshot (pass --{name.replace('_', '-')} DIR or set {ENV[name]}); skipped")
            continue
        suites.append(dedupe(read(Snapshot(spec, PINNED[name]))))
    if not suites:
        print("no peer suite to run: nothing measured")
        return 0
    report(suites, readers(), verbose, dump)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
