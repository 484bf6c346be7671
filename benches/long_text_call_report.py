"""A call of about 1 MB written in the reply's text (a write_file of 55,000 lines of code), read whole by
``parse_response`` and token by token by ``TextCallParser`` (4 KB tokens), beside ``orjson.loads`` of the
call's JSON alone, in four layouts: bare JSON, a hermes ``<tool_call>`` block, prose then the block, a json fence.

    python benches/long_text_call_report.py          (release build: maturin develop --release)
"""

from __future__ import annotations

import timeit

import orjson

import toolmend


def main() -> None:
    arguments = {"path": "src/app.py", "content": "line of code = 1;\n" * 55_000}
    call = orjson.dumps({"name": "write_file", "arguments": arguments}).decode()
    layouts = {
        "bare JSON": call,
        "hermes block": f"<tool_call>{call}</tool_call>",
        "prose, then the block": "I'll write it.\n<tool_call>" + call + "</tool_call>",
        "json fence": "```json\n" + call + "\n```",
    }
    print("| layout | MB | parse_response | TextCallParser, 4 KB tokens | orjson.loads of the call |")
    print("|---|---:|---:|---:|---:|")
    for name, content in layouts.items():
        body = orjson.dumps({"message": {"role": "assistant", "content": content}})
        (found,) = toolmend.parse_response(body).calls
        assert found.arguments == arguments, name

        def tokens(content: str = content) -> list[object]:
            parser = toolmend.TextCallParser()
            for i in range(0, len(content), 4096):
                parser.feed(content[i : i + 4096])
            return parser.flush()

        whole = min(timeit.repeat(lambda: toolmend.parse_response(body), number=3, repeat=5)) / 3
        streamed = min(timeit.repeat(tokens, number=2, repeat=5)) / 2
        floor = min(timeit.repeat(lambda: orjson.loads(call), number=10, repeat=5)) / 10
        print(f"| {name} | {len(content) / 1e6:.2f} | {whole * 1e3:.2f} ms | {streamed * 1e3:.2f} ms | {floor * 1e3:.2f} ms |")


if __name__ == "__main__":
    main()
