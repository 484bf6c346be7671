"""The operations commands of `toolmend`: `config show`, `stats`, `debug tool-call`, `smoke`, and the client
`chat` builds; the `--log-level` every command that logs takes."""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import logging
import sys
from typing import Any, Awaitable, Callable, Iterator

from toolmend._log import loggable
from toolmend._states import Lane

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

LOG_LEVELS = ("debug", "info", "warning", "error")


def add_log_level(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--log-level", choices=LOG_LEVELS, type=str.lower, default=None,
        help="print the 'toolmend' logger's records from this level up on stderr, as '[LEVEL] message'",
    )


@contextlib.contextmanager
def logging_to_stderr(level: str | None) -> Iterator[None]:
    """The 'toolmend' logger's records on stderr from ``level`` up while a command runs (None: as configured)."""
    if level is None:
        yield
        return
    logger = logging.getLogger("toolmend")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("[%(levelname)s] %(message)s"))
    before = logger.level
    logger.addHandler(handler)
    logger.setLevel(level.upper())
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(before)


def load_config(args: argparse.Namespace, **overrides: Any) -> Any:
    """The RetryConfig of a command: ``--config FILE`` (else $TOOLMEND_CONFIG or .agent/config.yml found from the
    working directory up), the environment, ``overrides``; None after printing why it cannot be read."""
    from toolmend.config import RetryConfig

    provider = getattr(args, "provider", None) or "ollama"
    try:
        return RetryConfig.load(args.config, provider=provider, **overrides)
    except (OSError, ValueError, TypeError) as e:
        print(f"toolmend: {e}", file=sys.stderr)
        return None


# ---- toolmend config show ----------------------------------------------------------------------------


def config_show(args: argparse.Namespace) -> int:
    from toolmend.config import SEED_NAMES, sources

    try:
        rows = sources(args.config, provider=args.provider)
    except (OSError, ValueError, TypeError) as e:
        print(f"toolmend: {e}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print(json.dumps({name: {"value": value, "source": where} for name, value, where in rows}, indent=2))
        return EXIT_OK
    # A limit is shown with the seed's name of it too (max_size (max_argument_size)).
    seed_name = {short: seed for seed, short in SEED_NAMES.items()}
    shown = [(name + (f" ({seed_name[name]})" if name in seed_name else ""),
              "(built in)" if name == "retry_prompt_template" and where == "default" else repr(value), where)
             for name, value, where in rows]
    widths = [max(len(r[i]) for r in shown) for i in (0, 1)]
    for name, value, where in shown:
        if len(value) > 60:
            value = value[:57] + "..."
        print(f"{name.ljust(widths[0])}  {value.ljust(min(widths[1], 60))}  {where}")
    return EXIT_OK


# ---- toolmend stats ----------------------------------------------------------------------------------

#: An attempt that ended its chat well.
_SUCCESS = (Lane.OK, Lane.SALVAGED)


def summarise(lines: list[dict[str, Any]]) -> dict[str, Any]:
    """Chats of an audit file (attempts grouped by correlation id, in file order) as counts and percentages:
    a chat succeeded when its last attempt's lane is ok or salvaged; of those, ``first_try`` needed one attempt
    and no repair, ``repaired`` had calls mended, ``retried`` took more than one attempt (a chat can be both).
    Everything else failed (including chats the file shows under way or cancelled)."""
    chats: dict[Any, list[dict[str, Any]]] = {}
    for line in lines:
        chats.setdefault(line.get("correlation_id"), []).append(line)
    counts = dict.fromkeys(("chats", "succeeded", "first_try", "repaired", "retried", "failed"), 0)
    repairs: dict[str, int] = {}
    for attempts in chats.values():
        counts["chats"] += 1
        kinds: dict[str, int] = {}
        for a in attempts:
            for kind, n in (a.get("repairs") or {}).items():
                kinds[kind] = kinds.get(kind, 0) + int(n)
        if str(attempts[-1].get("lane")) not in _SUCCESS:
            counts["failed"] += 1
            continue
        counts["succeeded"] += 1
        for kind, n in kinds.items():
            repairs[kind] = repairs.get(kind, 0) + n
        counts["repaired"] += bool(kinds) or attempts[-1].get("lane") == Lane.SALVAGED
        counts["retried"] += len(attempts) > 1
        counts["first_try"] += len(attempts) == 1 and not kinds and attempts[-1].get("lane") == Lane.OK
    total = counts["chats"]
    percent = {k: round(100 * v / total, 1) if total else 0.0 for k, v in counts.items() if k != "chats"}
    return {**counts, "percent": percent, "repairs": dict(sorted(repairs.items(), key=lambda kv: (-kv[1], kv[0])))}


def stats(args: argparse.Namespace) -> int:
    try:
        with open(args.file, "rb") as f:
            lines = [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError) as e:
        print(f"toolmend: cannot read {args.file}: {e}", file=sys.stderr)
        return EXIT_USAGE
    summary = summarise(lines)
    if args.json:
        print(json.dumps(summary, indent=2))
        return EXIT_OK
    p = summary["percent"]
    print(f"{len(lines)} attempts in {summary['chats']} chats")
    print(
        f"succeeded {p['succeeded']}% (first try {p['first_try']}%, repaired {p['repaired']}%, "
        f"retried {p['retried']}%), failed {p['failed']}%"
    )
    if summary["repairs"]:
        print("repairs: " + ", ".join(f"{kind} {n}" for kind, n in summary["repairs"].items()))
    rows: list[tuple[str, str]] = []
    for field in ("model", "lane", "code"):
        counts: dict[str, int] = {}
        for line in lines:
            key = str(line.get(field) or "-")
            counts[key] = counts.get(key, 0) + 1
        rows += [(f"{field} {k}", str(v)) for k, v in sorted(counts.items(), key=lambda kv: -kv[1])]
    durations = sorted(float(line.get("duration_ms") or 0) for line in lines)
    if durations:
        def pick(q: float) -> float:
            return durations[min(len(durations) - 1, int(q * len(durations)))]

        rows.append(("latency p50 / p95 / max (ms)", f"{pick(0.5):.1f} / {pick(0.95):.1f} / {durations[-1]:.1f}"))
    prompt = sum(int(line.get("prompt_tokens") or 0) for line in lines)
    completion = sum(int(line.get("completion_tokens") or 0) for line in lines)
    rows.append(("tokens prompt + completion", f"{prompt} + {completion}"))
    width = max(len(r[0]) for r in rows)
    for name, value in rows:
        print(f"{name.ljust(width)}  {value}")
    return EXIT_OK


# ---- toolmend debug tool-call -------------------------------------------------------------------------


def chat_outcome(attempts: list[dict[str, Any]]) -> str:
    """A chat of the audit file as the seed's parse result: FAIL when its last attempt did not end it well,
    REPAIRED when calls were mended (or salvaged), else SUCCESS."""
    last = str(attempts[-1].get("lane"))
    if last not in _SUCCESS:
        return "FAIL"
    if last == Lane.SALVAGED or any(a.get("repairs") for a in attempts):
        return "REPAIRED"
    return "SUCCESS"


def debug_tool_call(args: argparse.Namespace) -> int:
    """Every attempt of one chat, read from the audit file (``--audit``, else the config's ``audit_path``)."""
    path = args.audit
    if path is None:
        config = load_config(args)
        if config is None:
            return EXIT_USAGE
        path = config.audit_path
    if path is None:
        print("toolmend: no audit file: give --audit FILE, or set audit_path in the config", file=sys.stderr)
        return EXIT_USAGE
    try:
        with open(path, "rb") as f:
            attempts = [line for line in (json.loads(raw) for raw in f if raw.strip()) if line.get("correlation_id") == args.correlation_id]
    except (OSError, ValueError) as e:
        print(f"toolmend: cannot read {path}: {e}", file=sys.stderr)
        return EXIT_USAGE
    if not attempts:
        print(f"toolmend: no attempt with correlation id {args.correlation_id!r} in {path}", file=sys.stderr)
        return EXIT_FAILED
    if args.json:
        print(json.dumps(attempts, indent=2))
        return EXIT_OK
    repairs: dict[str, int] = {}
    for a in attempts:
        for kind, n in (a.get("repairs") or {}).items():
            repairs[kind] = repairs.get(kind, 0) + int(n)
    started = datetime.datetime.fromtimestamp(float(attempts[0].get("ts") or 0), datetime.timezone.utc)
    codes = [a["code"] for a in attempts if a.get("code")]
    rows = [
        ("Timestamp", started.isoformat(timespec="milliseconds").replace("+00:00", "Z")),
        ("Model", str(attempts[0].get("model") or "-")),
        ("Parse Result", chat_outcome(attempts)),
        ("Retry Count", str(len(attempts) - 1)),
        ("Repair Applied", ", ".join(f"{kind}" + (f" x{n}" if n > 1 else "") for kind, n in repairs.items()) or "none"),
        ("Error Codes", ", ".join(codes) or "none"),
        ("Tokens", f"{sum(int(a.get('prompt_tokens') or 0) for a in attempts)} prompt + "
                   f"{sum(int(a.get('completion_tokens') or 0) for a in attempts)} completion"),
    ]
    print(f"Tool Call Debug: {args.correlation_id}")
    for name, value in rows:
        print(f"{name + ':':<16}{value}")
    print("Attempts:")
    for a in attempts:
        print(
            f"  {a.get('attempt')}  {str(a.get('lane')):<10}"
            + (f" HTTP {a['status']}" if a.get("status") else " no reply")
            + (f"  {a['code']}" if a.get("code") else "")
            + f"  {float(a.get('duration_ms') or 0):.1f} ms"
            + (f", then waited {float(a['delay_ms']):.0f} ms" if a.get("delay_ms") else "")
        )
        for call in a.get("calls") or ():
            kinds = call.get("repairs") or []
            print(f"     {_shown(call.get('tool_name'))} ({_shown(call.get('tool_call_id'))})  "
                  + ("REPAIRED " + ", ".join(map(_shown, kinds)) if kinds else "PASSED"))
        for failed in a.get("failed") or ():
            at = f" at {failed['position']}" if failed.get("position") is not None else ""
            print(f"     {_shown(failed.get('tool_name'))} ({_shown(failed.get('tool_call_id'))})  "
                  f"FAILED {_shown(failed.get('code'))}{at}")
    return EXIT_OK


def _shown(value: Any) -> str:
    """A value of the audit file (model text: a tool name, an id) fit for one line of the terminal."""
    return "-" if value is None else loggable(value, 80)


# ---- clients from the command line -------------------------------------------------------------------


def make_client(args: argparse.Namespace, registry: Any, config: Any, model: str | None = None) -> Any:
    from toolmend.client import OllamaClient, OpenAICompatibleClient

    model = model if model is not None else args.model
    if args.provider == "openai":
        if not args.base_url:
            raise SystemExit("toolmend: --provider openai needs --base-url (such as http://127.0.0.1:8000/v1)")
        return OpenAICompatibleClient(args.base_url, model, args.api_key, registry, config)
    return OllamaClient(args.base_url, model, registry, config)


def add_client_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--provider", choices=["ollama", "openai"], default="ollama", help="wire format (default ollama)")
    parser.add_argument(
        "--base-url", "--host", dest="base_url", default=None,
        help="server address: Ollama's (default OLLAMA_HOST or 127.0.0.1:11434) or an OpenAI-compatible /v1 URL",
    )
    parser.add_argument("--api-key", default=None, help="bearer token for --provider openai (never read from the environment)")
    add_config_option(parser)
    add_log_level(parser)


def add_config_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config", default=None, metavar="FILE",
        help=".agent/config.yml or toolmend.toml (default: $TOOLMEND_CONFIG, else .agent/config.yml found from the "
        "working directory up)",
    )


# ---- toolmend smoke ----------------------------------------------------------------------------------

SMOKE_TOOLS = [
    {
        "name": "echo",
        "description": "Repeat a text back to the user.",
        "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    },
    {
        "name": "delete_file",
        "description": "Delete a file.",
        # The confirmation is not in the prompt: a model learns it from the reflection, which shows the schema.
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "confirm": {"const": "yes-delete-it"}},
            "required": ["path", "confirm"],
        },
    },
]
SMOKE_MISSING_MODEL = "toolmend-smoke-no-such-model"


def smoke(args: argparse.Namespace) -> int:
    """One turn per lane that a live server can be made to take; a pass/fail line each."""
    import asyncio

    from toolmend.errors import ModelHTTPError, ToolmendError
    from toolmend.registry import ToolRegistry

    registry = ToolRegistry.from_tools(SMOKE_TOOLS)
    config = load_config(args)
    if config is None:
        return EXIT_USAGE
    if config.max_retries < 1:  # the reflection check needs one
        config = load_config(args, max_retries=1)
    echo = [{"role": "user", "content": "Call the echo tool with the text 'smoke test'."}]
    delete = [{"role": "user", "content": "Delete the file /tmp/toolmend-smoke.txt with the delete_file tool."}]

    async def ok(client: Any) -> str:
        result = await client.chat(echo, tools=["echo"])
        calls = [c for c in result.tool_calls if c.name == "echo"]
        if not calls:
            raise AssertionError(f"no echo call came back (text: {result.text[:80]!r})")
        return f"{_lanes(result.attempts)}, echo {calls[0].arguments}"

    async def stream(client: Any) -> str:
        from toolmend.client import Done, ToolCallCompleted

        completed, result = [], None
        async for event in client.chat_stream(echo, tools=["echo"]):
            if isinstance(event, ToolCallCompleted):
                completed.append(event.call.name)
            elif isinstance(event, Done):
                result = event.result
        if "echo" not in completed or result is None:
            raise AssertionError(f"no echo call streamed (calls: {completed})")
        return f"{_lanes(result.attempts)}, {len(completed)} call(s) streamed"

    async def reflect(client: Any) -> str:
        result = await client.chat(delete, tools=["delete_file"])
        lanes = [str(a.lane) for a in result.attempts]
        if Lane.MODEL not in lanes:
            return f"{_lanes(result.attempts)} (the model got it right at once: no reflection was needed)"
        return f"{_lanes(result.attempts)}, reflected and corrected"

    async def fatal(client: Any) -> str:
        try:
            await client.chat(echo, tools=["echo"])
        except ModelHTTPError as e:
            return f"fatal, HTTP {e.status} as expected"
        raise AssertionError("a chat with a model that does not exist succeeded")

    checks: list[tuple[str, Callable[[Any], Awaitable[str]], str | None]] = [
        ("ok (chat)", ok, None),
        ("ok (stream)", stream, None),
        ("model (reflection)", reflect, None),
        ("fatal (unknown model)", fatal, SMOKE_MISSING_MODEL),
    ]

    async def run() -> int:
        failed = 0
        for name, check, model in checks:
            client = make_client(args, registry, config, model)
            async with client:
                try:
                    said = await check(client)
                    print(f"pass  {name}: {said}", flush=True)
                except (ToolmendError, AssertionError) as e:
                    failed += 1
                    print(f"FAIL  {name}: {type(e).__name__}: {e}", flush=True)
        print(f"{len(checks) - failed} of {len(checks)} checks passed")
        return EXIT_OK if not failed else EXIT_FAILED

    return asyncio.run(run())


def _lanes(attempts: Any) -> str:
    return " -> ".join(str(a.lane) for a in attempts)
