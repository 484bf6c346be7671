"""The toolmend command line: `toolmend repair`, `toolmend bench`."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

from toolmend.repair import MAX_DEPTH, MAX_SIZE, TIMEOUT_MS, RepairError, repair

EXIT_OK, EXIT_UNREPAIRABLE, EXIT_USAGE = 0, 1, 2


def _read(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    with open(path, "rb") as f:
        return f.read()


def _error_dict(error: RepairError | None) -> dict[str, object] | None:
    if error is None:
        return None
    return {"code": error.code, "message": error.message, "position": error.position, "suggestion": error.suggestion}


def _repair_command(args: argparse.Namespace) -> int:
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
            "repairs": [{"kind": r.kind, "position": r.position} for r in result.repairs],
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


def _bench_command(args: argparse.Namespace) -> int:
    from toolmend.bench import print_peer_table

    print_peer_table(quick=args.quick)
    return EXIT_OK


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="toolmend", description="Mend and check LLM tool calls.")
    commands = parser.add_subparsers(dest="command", required=True)
    rep = commands.add_parser("repair", help="print FILE (or stdin) repaired into strict JSON")
    rep.add_argument("file", nargs="?", default="-", metavar="FILE|-")
    rep.add_argument("--report", action="store_true", help="print the repair log as JSON instead")
    rep.add_argument("--max-size", type=int, default=MAX_SIZE, help="bytes (default %(default)s)")
    rep.add_argument("--max-depth", type=int, default=MAX_DEPTH, help="levels (default %(default)s)")
    rep.add_argument("--timeout-ms", type=int, default=TIMEOUT_MS, help="deadline (default %(default)s)")
    rep.set_defaults(run=_repair_command)
    bench = commands.add_parser("bench", help="time toolmend against the peers installed here")
    bench.add_argument("--quick", action="store_true", help="fewer rounds, smaller inputs")
    bench.set_defaults(run=_bench_command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `toolmend` script; returns the exit status."""
    args = _parser().parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
