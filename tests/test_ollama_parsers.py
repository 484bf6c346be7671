"""benches/ollama_parsers.py reads Ollama's Go parser tests where they lie: its Go literal tokenizer, its
reading of test tables, steps and imperative tests, and its scoring rule, held on small samples written here
(no case of Ollama's is copied). The benchmark itself runs in sessions on a snapshot, never here."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

_DIR = pathlib.Path(__file__).parent.parent / "benches"
sys.path.insert(0, str(_DIR))
_SPEC = importlib.util.spec_from_file_location("ollama_parsers", _DIR / "ollama_parsers.py")
assert _SPEC and _SPEC.loader
bench = importlib.util.module_from_spec(_SPEC)
sys.modules["ollama_parsers"] = bench  # its dataclasses look their module up
_SPEC.loader.exec_module(bench)


def test_go_string_literals_decode_their_escapes() -> None:
    src = 'x := "a\\tb\\"c\\x41\\u00e9\\101" + `raw \\n "q"` // "comment"\n/* "no" */ r := \'z\''
    toks = bench.tokenize(src)
    assert [t.value for t in toks if t.kind == "str"] == ['a\tb"cAéA', 'raw \\n "q"']
    assert [t.value for t in toks if t.kind == "rune"] == [ord("z")]


SAMPLE = '''
package parsers

func TestSample(t *testing.T) {
\ttests := []struct {
\t\tname          string
\t\tinput         string
\t\texpectedCalls []api.ToolCall
\t\thasThinking   bool
\t}{
\t\t{
\t\t\tname:  "call",
\t\t\tinput: "Sure.<tool_call>{\\"name\\": \\"f\\", \\"arguments\\": {\\"a\\": 1, \\"l\\": [\\"x\\", true]}}</tool_call>",
\t\t\texpectedCalls: []api.ToolCall{
\t\t\t\t{Function: api.ToolCallFunction{Name: "f", Arguments: testArgs(map[string]any{"a": 1, "l": []any{"x", true}})}},
\t\t\t},
\t\t},
\t\t{name: "text", input: "plain " + "answer"},
\t\t{name: "thought", input: "a <tool_call>{\\"name\\": \\"g\\", \\"arguments\\": {}}</tool_call>", hasThinking: true,
\t\t\texpectedCalls: []api.ToolCall{{Function: api.ToolCallFunction{Name: "g", Arguments: args(`{}`)}}}},
\t\t{name: "helper", input: "x", expectedCalls: []api.ToolCall{{Function: api.ToolCallFunction{Name: "h", Arguments: unknownHelper()}}}},
\t}
\tfor _, tt := range tests {
\t\tp.Add(tt.input, true)
\t}
}

func TestInner(t *testing.T) {
\ttests := []struct {
\t\tinput string
\t\twant  []api.ToolCall
\t}{{input: "f(a=1)"}}
\tfor _, tt := range tests {
\t\tparseInner(tt.input)
\t}
}

func TestSteps(t *testing.T) {
\tcases := []struct {
\t\tdesc  string
\t\tsteps []step
\t}{
\t\t{desc: "streamed", steps: []step{
\t\t\t{input: "[TOOL_CALLS]f[ARGS]", wantEvents: []ev{}},
\t\t\t{input: `{"a": 2}`, wantEvents: []ev{evEventToolCall{name: "f", args: `{"a": 2}`}}},
\t\t}},
\t\t{desc: "raw", steps: []step{{input: "<tool_call>x", wantEvents: []ev{evRawToolCall{raw: "x"}}}}},
\t}
\t_ = cases
}

func TestImperative(t *testing.T) {
\tcontent, thinking, calls, err := parser.Add("<tool_call>{\\"name\\":\\"w\\",\\"arguments\\":{\\"city\\":\\"P\\"}}</tool_call>", true)
\tif len(calls) != 1 {
\t\tt.Fatal()
\t}
\tif calls[0].Function.Name != "w" {
\t\tt.Fatal()
\t}
\tv, ok := calls[0].Function.Arguments.Get("city")
\tif !ok || v != "P" {
\t\tt.Fatal()
\t}
}
'''


def test_cases_are_read_from_tables_steps_and_imperative_tests() -> None:
    fc = bench.read_file("model/parsers/sample_test.go", SAMPLE)
    by_name = {c.name: c for c in fc.cases}
    assert by_name["call"].expect == [{"name": "f", "arguments": {"a": 1, "l": ["x", True]}}]
    assert by_name["text"].text == "plain answer" and by_name["text"].expect is None
    assert by_name["thought"].think and by_name["thought"].expect == [{"name": "g", "arguments": {}}]
    assert by_name["streamed"].text == '[TOOL_CALLS]f[ARGS]{"a": 2}'
    assert by_name["streamed"].expect == [{"name": "f", "arguments": {"a": 2}}]
    imperative = by_name["TestImperative"]
    assert imperative.partial_args and imperative.expect == [{"name": "w", "arguments": {"city": "P"}}]
    reasons = sorted(r for _, r in fc.skipped)
    assert reasons == [
        "helper unknownHelper",
        "no model output (an inner function's input)",
        "raw tool-call events (the text inside the tags)",
    ]


def test_scoring_reopens_reasoning_and_judges_calls_in_it() -> None:
    fc = bench.read_file("model/parsers/sample_test.go", SAMPLE)
    results = {}
    for c in fc.cases:
        text, closer = bench.reopen_thinking(c)
        got, errors = bench.read_calls(text)
        ok = bench.met(c, got, errors)
        results[c.name] = (ok, None if ok else bench.judged_wrong(c, got, closer))
    assert results["call"] == (True, None)
    assert results["text"] == (True, None)
    assert results["streamed"] == (True, None)
    assert results["TestImperative"] == (True, None)
    # The test turns thinking on: the call stands in reasoning the prompt opened, and never runs.
    ok, why = results["thought"]
    assert not ok and why is not None and "inside reasoning" in why


def test_a_missing_snapshot_measures_nothing(capsys) -> None:  # type: ignore[no-untyped-def]
    assert bench.main(["--ollama", "/nonexistent/ollama"]) == 0
    assert "no snapshot" in capsys.readouterr().out
