"""The toolmend command line: `toolmend repair`, `parse`, `tools list|show`, `validate`, `chat`, `stats`, `config show`,
`debug tool-call`, `smoke`, `bench`, `--version`."""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import sys
from typing import TYPE_CHECKING, Any, Sequence

from toolmend import cli_ops
from toolmend.errors import UnknownToolError
from toolmend._limits import DEFAULT_LIMITS
from toolmend._repair import RepairError, repair, repair_many

if TYPE_CHECKING:
    from toolmend.registry import ToolRegistry

EXIT_OK, EXIT_UNREPAIRABLE, EXIT_USAGE = 0, 1, 2
EXIT_INVALID = 1  # validate: arguments invalid or tool unknown


def _read(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    with open(path, "rb") as f:
        return f.read()


def _error_dict(error: RepairError | None) -> dict[str, object] | None:
    if error is None:
        return None
    return {"code": error.code, "message": error.message, "position": error.position, "suggestion": error.suggestion}


def _repair_dict(repair: Any) -> dict[str, Any]:
    """A repair as the reports write it; `count` only on a record standing for several (past the log's
    first 1,000 repairs)."""
    shown = {"kind": repair.kind, "position": repair.position}
    if repair.count > 1:
        shown["count"] = repair.count
    return shown


#: Records repaired per batch in `repair --jsonl`: memory stays bounded by one batch.
JSONL_BATCH = 4096


def _repair_jsonl(args: argparse.Namespace) -> int:
    """One record per input line: the repaired record, or {"line", "error"} for one that cannot be
    repaired; the passes run on every core. A progress line on stderr when it is a terminal."""
    source = sys.stdin.buffer if args.file == "-" else open(args.file, "rb")  # noqa: SIM115
    sink = sys.stdout if args.output is None else open(args.output, "w", encoding="utf-8")  # noqa: SIM115
    progress = sys.stderr.isatty()
    done = failed = 0
    try:
        while True:
            batch = [line.rstrip(b"\r\n") for line in itertools.islice(source, JSONL_BATCH)]
            if not batch:
                break
            for result in repair_many(
                batch, max_size=args.max_size, max_depth=args.max_depth, timeout_ms=args.timeout_ms
            ):
                done += 1
                if result.ok:
                    assert result.json is not None
                    sink.write(result.json + "\n")
                else:
                    failed += 1
                    sink.write(json.dumps({"line": done, "error": _error_dict(result.error)}) + "\n")
            if progress:
                print(f"\rtoolmend: {done:,} records, {failed:,} not repairable", end="", file=sys.stderr)
    finally:
        if progress:
            print(file=sys.stderr)
        if source is not sys.stdin.buffer:
            source.close()
        if sink is not sys.stdout:
            sink.close()
    return EXIT_UNREPAIRABLE if failed else EXIT_OK


def _repair_command(args: argparse.Namespace) -> int:
    if args.jsonl:
        try:
            return _repair_jsonl(args)
        except OSError as e:
            print(f"toolmend: cannot read {args.file}: {e.strerror}", file=sys.stderr)
            return EXIT_USAGE
    try:
        data = _read(args.file)
    except OSError as e:
        print(f"toolmend: cannot read {args.file}: {e.strerror}", file=sys.stderr)
        return EXIT_USAGE
    result = repair(data, max_size=args.max_size, max_depth=args.max_depth, timeout_ms=args.timeout_ms)
    if args.report:
        report = {
            "ok": result.ok,
            "repaired": result.repaired,
            "repairs": [_repair_dict(r) for r in result.repairs],
            "error": _error_dict(result.error),
        }
        print(json.dumps(report, indent=2))
    elif result.ok:
        assert result.json is not None
        sys.stdout.write(result.json if result.json.endswith("\n") else result.json + "\n")
    if result.error is not None:
        e = result.error
        print(f"{e.code}: {e.message} ({e.suggestion})", file=sys.stderr)
        return EXIT_UNREPAIRABLE
    return EXIT_OK


def _load_tools(path: str, strict: bool = True) -> ToolRegistry | None:
    """The registry of a tools file, or None after printing why it cannot be read."""
    from toolmend.registry import ToolRegistry

    try:
        registry = ToolRegistry.from_file(path, strict=strict)
    except (OSError, ValueError, ImportError) as e:
        print(f"toolmend: cannot read tools from {path}: {e}", file=sys.stderr)
        return None
    for skipped in registry.skipped:
        if skipped.code:
            print(f"toolmend: skipped tool '{skipped.name}': {skipped.reason}", file=sys.stderr)
    return registry


def _tools_command(args: argparse.Namespace) -> int:
    registry = _load_tools(args.tools)
    if registry is None:
        return EXIT_USAGE
    if args.action == "list":
        rows = [(t.name, t.version, t.category or "", t.description) for t in registry.tools()]
        widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(("Name", "Version", "Category"))]
        header = ("Name", "Version", "Category", "Description")
        for row in [header, *rows]:
            print("  ".join(cell.ljust(w) for cell, w in zip(row[:3], widths)) + "  " + row[3])
        print(f"Total: {len(rows)} tools registered")
        return EXIT_OK
    if args.name is None:
        print("toolmend: tools show needs a tool NAME", file=sys.stderr)
        return EXIT_USAGE
    try:
        tool = registry.get(args.name, version=args.tool_version)
    except UnknownToolError as e:
        print(e, file=sys.stderr)
        return EXIT_INVALID
    print(f"Tool: {tool.name}\nVersion: {tool.version}\nCategory: {tool.category or '-'}")
    versions = registry.versions(tool.name)
    if len(versions) > 1:
        print(f"Versions: {', '.join(versions)} (latest {versions[-1]})")
    hint = registry.schema_hint(tool.name) if tool.version == versions[-1] else f"(an older version; the latest is {versions[-1]})"
    print(f"Description: {tool.description}\n{hint}\nSchema (JSON):")
    print(json.dumps(tool.schema, indent=2))
    return EXIT_OK


def _validate_command(args: argparse.Namespace) -> int:
    registry = _load_tools(args.tools)
    if registry is None:
        return EXIT_USAGE
    if args.args == "-":
        data: str | bytes = sys.stdin.buffer.read()
    else:
        data = args.args
    result = registry.try_validate(args.name, data)
    if result.ok:
        print(json.dumps(result.value, indent=2, ensure_ascii=False))
        return EXIT_OK
    for error in result.errors:
        print(f"{error}" + (f" ({error.suggestion})" if error.suggestion else ""))
    return EXIT_INVALID


def _parse_command(args: argparse.Namespace) -> int:
    import time

    from toolmend.response import read_reply

    # The config's limits, repair and strictness (--config, else the file found, and TOOLMEND_*), under the flags.
    overrides = {"max_size": args.max_size} if args.max_size is not None else {}
    config = cli_ops.load_config(args, **overrides)
    if config is None:
        return EXIT_USAGE
    registry = None
    if args.tools:
        registry = _load_tools(args.tools, strict=config.strict_validation)
        if registry is None:
            return EXIT_USAGE
    try:
        body = _read(args.file)
    except OSError as e:
        print(f"toolmend: {e}", file=sys.stderr)
        return EXIT_USAGE
    repair_on = config.enable_auto_repair and not args.no_repair
    start = time.perf_counter()
    result = read_reply(
        body, registry, repair=repair_on, max_size=config.max_size, max_depth=config.max_depth, timeout_ms=config.timeout_ms
    )
    _log_parsed(result, config, registry, repair_on, time.perf_counter() - start)
    if args.json:
        report = {
            "ok": result.ok,
            "calls": [
                {
                    "id": c.id,
                    "name": c.name,
                    "arguments": c.arguments,
                    "index": c.index,
                    "source": c.source,
                    "repairs": [_repair_dict(r) for r in c.repairs],
                }
                for c in result.calls
            ],
            "errors": [
                {
                    "code": e.code,
                    "message": e.message,
                    "tool_name": e.tool_name,
                    "position": e.position,
                    "index": e.index,
                    "suggestion": e.suggestion,
                    "validation": [f.as_dict() for f in e.validation],
                }
                for e in result.errors
            ],
            "text": result.text,
        }
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        for call in result.calls:
            repairs = ", ".join(r.kind for r in call.repairs)
            print(f"call {call.index} {call.name} [{call.id}] from {call.source}" + (f" (repaired: {repairs})" if repairs else ""))
            print("  " + json.dumps(call.arguments, ensure_ascii=False))
        for error in result.errors:
            print(f"error: {error}" + (f" ({error.suggestion})" if error.suggestion else ""))
            for field in error.validation:
                print(f"  {field}")
        if result.text:
            print(f"text: {result.text}")
    return EXIT_OK if result.ok else EXIT_INVALID


def _log_parsed(result: object, config: object, registry: object, repair_on: bool, seconds: float) -> None:
    """The records of `toolmend parse` on the 'toolmend' logger (shown with --log-level): the seed's records of a
    reply read alone (toolmend._call_log), under the config's log_repair_details and log_argument_values."""
    from toolmend import _call_log

    metrics = getattr(registry, "metrics", None)
    ctx = _call_log.Context(
        _call_log.new_correlation_id(), parse_s=seconds,
        repair_details=config.log_repair_details, argument_values=config.log_argument_values,  # type: ignore[attr-defined]
        include_actual_values=bool(getattr(metrics, "include_actual_values", False)),
    )
    _call_log.result(result, ctx, "" if repair_on else " (auto-repair disabled)")


def _chat_command(args: argparse.Namespace) -> int:
    import asyncio

    from toolmend import cli_ops
    from toolmend.client import Done, TextDelta, ToolCallCompleted, ToolCallFailed
    from toolmend.errors import ModelHTTPError, RetryExhaustedError

    config = cli_ops.load_config(args)
    if config is None:
        return EXIT_USAGE
    registry = None
    if args.tools:
        registry = _load_tools(args.tools)
        if registry is None:
            return EXIT_USAGE
    messages = [{"role": "user", "content": args.message}]

    async def streamed(client: object) -> object:
        async for event in client.chat_stream(messages):  # type: ignore[attr-defined]
            if isinstance(event, TextDelta):
                print(event.text, end="", flush=True)
            elif isinstance(event, ToolCallCompleted):
                print(f"\n[call {event.call.name} {json.dumps(event.call.arguments, ensure_ascii=False)}]", flush=True)
            elif isinstance(event, ToolCallFailed):
                print(f"\n[failed: {event.error}]", flush=True)
            elif isinstance(event, Done):
                print()
                return event.result
        raise RuntimeError("stream ended without Done")

    async def turn() -> int:
        async with cli_ops.make_client(args, registry, config) as client:
            try:
                if args.stream:
                    result = await streamed(client)
                    _print_attempts(result.attempts)  # type: ignore[attr-defined]
                    return EXIT_OK
                result = await client.chat(messages)
            except RetryExhaustedError as e:
                print(f"toolmend: {e} (correlation {e.correlation_id})", file=sys.stderr)
                _print_attempts(e.attempts)
                return EXIT_INVALID
            except ModelHTTPError as e:
                print(f"toolmend: {e}", file=sys.stderr)
                return EXIT_INVALID
        for call in result.tool_calls:
            repairs = ", ".join(r.kind for r in call.repairs)
            print(f"call {call.index} {call.name} [{call.id}]" + (f" (repaired: {repairs})" if repairs else ""))
            print("  " + json.dumps(call.arguments, ensure_ascii=False))
        if result.text:
            print(f"text: {result.text}")
        _print_attempts(result.attempts)
        print(f"usage: {result.usage.prompt_tokens} prompt + {result.usage.completion_tokens} completion tokens; correlation {result.correlation_id}")
        return EXIT_OK

    return asyncio.run(turn())


def _print_attempts(attempts: Sequence[object]) -> None:
    for a in attempts:
        print(
            f"attempt {a.number}: {a.lane}"  # type: ignore[attr-defined]
            + (f" HTTP {a.status}" if a.status else "")  # type: ignore[attr-defined]
            + (f" {a.error_code}" if a.error_code else "")  # type: ignore[attr-defined]
            + (f", waited {a.delay_s:.3f}s" if a.delay_s else "")  # type: ignore[attr-defined]
        )


def _bench_command(args: argparse.Namespace) -> int:
    from toolmend.bench import print_peer_table

    print_peer_table(quick=args.quick)
    return EXIT_OK


def _parser() -> argparse.ArgumentParser:
    from toolmend import __version__

    parser = argparse.ArgumentParser(prog="toolmend", description="Mend and check LLM tool calls.")
    parser.add_argument("--version", action="version", version=f"toolmend {__version__}", help="print the version and exit")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    rep = commands.add_parser("repair", help="print FILE (or stdin) repaired into strict JSON")
    rep.add_argument("file", nargs="?", default="-", metavar="FILE|-", help="the text to repair (default: stdin)")
    rep.add_argument("--report", action="store_true", help="print the repair log as JSON instead")
    rep.add_argument("--jsonl", action="store_true", help="one record per line, repaired on every core")
    rep.add_argument("-o", "--output", metavar="OUT", help="with --jsonl: write here instead of stdout")
    rep.add_argument("--max-size", type=int, default=DEFAULT_LIMITS["max_size"], help="bytes (default %(default)s)")
    rep.add_argument("--max-depth", type=int, default=DEFAULT_LIMITS["max_depth"], help="levels (default %(default)s)")
    rep.add_argument("--timeout-ms", type=int, default=DEFAULT_LIMITS["timeout_ms"], help="deadline (default %(default)s)")
    rep.set_defaults(run=_repair_command)
    tools = commands.add_parser("tools", help="list the tools of a tools file, or show one")
    tools.add_argument("action", choices=["list", "show"], help="list every tool, or show one tool's schema")
    tools.add_argument("name", nargs="?", metavar="NAME", help="the tool to show")
    tools.add_argument("--tools", required=True, metavar="FILE", help="tools file: JSON, TOML or YAML")
    tools.add_argument("--tool-version", default=None, metavar="VERSION", help="show: this version (default: the latest)")
    tools.set_defaults(run=_tools_command)
    validate = commands.add_parser("validate", help="check arguments against a tool's schema")
    validate.add_argument("name", metavar="NAME", help="the tool whose schema checks the arguments")
    validate.add_argument("args", nargs="?", default="-", metavar="ARGS|-", help="JSON arguments (default: stdin)")
    validate.add_argument("--tools", required=True, metavar="FILE", help="tools file: JSON, TOML or YAML")
    validate.set_defaults(run=_validate_command)
    parse = commands.add_parser(
        "parse", help="print the tool calls of a model reply (Ollama or OpenAI JSON), under the config's limits"
    )
    parse.add_argument("file", nargs="?", default="-", metavar="RESPONSE|-", help="the reply (default: stdin)")
    parse.add_argument("--tools", metavar="FILE", help="validate against this tools file: JSON, TOML or YAML")
    parse.add_argument("--json", action="store_true", help="print a machine-readable report")
    parse.add_argument("--no-repair", action="store_true", help="take arguments only as strict JSON (enable_auto_repair off)")
    parse.add_argument("--max-size", type=int, default=None, metavar="BYTES", help="arguments larger are TLP-007 (default: the config's max_size)")
    cli_ops.add_config_option(parse)
    cli_ops.add_log_level(parse)
    parse.set_defaults(run=_parse_command)
    chat = commands.add_parser("chat", help="run one turn against a running server and print the tool calls")
    chat.add_argument("--model", required=True, help="the model to ask")
    chat.add_argument("--message", required=True, help="the user message of the turn")
    chat.add_argument("--tools", default=None, metavar="FILE", help="tools file: JSON, TOML or YAML")
    chat.add_argument("--stream", action="store_true", help="print text and calls as they arrive")
    cli_ops.add_client_options(chat)
    chat.set_defaults(run=_chat_command)
    stats = commands.add_parser("stats", help="success, repair and retry rates from a client's audit file (JSON lines)")
    stats.add_argument("file", metavar="AUDIT.jsonl", help="the audit file (RetryConfig.audit_path)")
    stats.add_argument("--json", action="store_true", help="print the summary as JSON")
    stats.set_defaults(run=cli_ops.stats)
    config = commands.add_parser("config", help="the client settings in effect, and where each came from")
    config.add_argument("action", choices=["show"], help="show every setting, its value and its source")
    cli_ops.add_config_option(config)
    config.add_argument("--provider", default="ollama", help="the section model.providers.PROVIDER read (default ollama)")
    config.add_argument("--json", action="store_true", help="print the settings as JSON")
    config.set_defaults(run=cli_ops.config_show)
    debug = commands.add_parser("debug", help="look into what the client did")
    debug.add_argument("what", choices=["tool-call"], help="tool-call: every attempt of one chat, from the audit file")
    debug.add_argument("--correlation-id", required=True, metavar="ID", help="the chat's correlation id (in logs and errors)")
    debug.add_argument("--audit", default=None, metavar="AUDIT.jsonl", help="the audit file (default: the config's audit_path)")
    cli_ops.add_config_option(debug)
    debug.add_argument("--json", action="store_true", help="print the chat's audit lines as JSON")
    debug.set_defaults(run=cli_ops.debug_tool_call)
    smoke = commands.add_parser("smoke", help="one turn per lane against a live server; a pass/fail line each")
    smoke.add_argument("--model", required=True, help="the model to ask")
    cli_ops.add_client_options(smoke)
    smoke.set_defaults(run=cli_ops.smoke)
    bench = commands.add_parser("bench", help="time toolmend against the peers installed here")
    bench.add_argument("--quick", action="store_true", help="fewer rounds, smaller inputs")
    bench.set_defaults(run=_bench_command)
    from toolmend import proxy  # the proxy's options live with it

    proxy.add_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `toolmend` script; returns the exit status."""
    args = _parser().parse_args(argv)
    with cli_ops.logging_to_stderr(getattr(args, "log_level", None)):
        return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
