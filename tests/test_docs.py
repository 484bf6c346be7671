"""Every ```python block in README.md and docs/*.md runs, and prints what the page says it prints.

The pages follow these conventions, and this test holds them to it:

- A ```python block is a script: it runs top to bottom, as the reader would paste it. The blocks of
  one page run in page order in one namespace, so a block may use what an earlier block on the same
  page defined (``reg`` from the registry section, say).
- What a block prints is shown in the ```text block that follows it (nothing but blank lines in
  between). The comparison is exact, line by line, after trailing spaces and trailing blank lines
  are dropped. A block that prints something must be followed by a ```text block, and a block
  with no ```text block after it must print nothing, so no output goes unchecked.
- Blocks run with the repository root as working directory (``examples/tools.json`` resolves),
  against the toolmend that is importable (the installed package, or PYTHONPATH).
- ``<!-- ollama-replies: FILE ... -->`` on the line before a block starts the loopback
  Ollama-protocol server of ``tests/ollama_server.py`` for that block and points OLLAMA_HOST at it.
  It answers the block's /api/chat requests with the files, in order: a ``.json`` file is one reply
  body, a ``.ndjson`` file one streamed reply (a line per JSON value). The block is then exactly
  what a user runs against a real Ollama, and no network is used.
- ``<!-- openai-replies: FILE ... -->`` does the same for an OpenAI-compatible server: the same loopback
  server, scripted with chat-completion bodies, its ``/v1`` URL in OPENAI_BASE_URL. A ``.sse`` file is one
  streamed completion, sent as server-sent events (the file holds them as the wire does).
- ``<!-- proxy-replies: FILE ... -->`` before a ```bash block (curl, as a user runs it against
  ``toolmend proxy``): the scripted server is the upstream of a real ``toolmend proxy`` process started for
  the block, and the block runs in bash with the page's address ``127.0.0.1:8808`` made the proxy's (a free
  port). It must exit 0, and what it prints is compared as a python block's is.
- ``; requires: MODULE`` at the end of an ``ollama-replies`` directive runs the block only where MODULE can be
  imported (an optional dependency the test extras install, such as ``opentelemetry.sdk``).
- ``<!-- no-run: REASON -->`` on the line before a block skips it. Only for a block that truly
  cannot run here; the reason is required.

Output must be deterministic: examples print no call ids generated at random, no timings.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import re
import socket
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ollama_server import Reply, ScriptedOllama

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
README_MAX_LINES = 150

FENCE = re.compile(r"^\s*```(\w*)\s*$")
DIRECTIVE = re.compile(r"^<!--\s*(ollama-replies|openai-replies|proxy-replies|no-run):\s*(.*?)\s*-->\s*$")
#: The proxy's address as the pages write it (its default port).
PROXY_ADDRESS = "127.0.0.1:8808"


@dataclass
class Block:
    lang: str
    line: int  # 1-based line of the first code line
    code: str
    opens: int  # 0-based line of the opening fence
    closes: int  # 0-based line of the closing fence
    output: str | None = None  # the ```text block that follows, if any
    directive: tuple[str, str] | None = None


def blocks(text: str) -> list[Block]:
    """The fenced blocks of a page, each python block paired with the text block after it."""
    lines = text.splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start = i + 1
        end = start
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        assert end < len(lines), f"line {i + 1}: a ``` block that is never closed"
        prev = lines[i - 1].strip() if i > 0 else ""
        d = DIRECTIVE.match(prev)
        directive = (d.group(1), d.group(2)) if d else None
        code = textwrap.dedent("\n".join(lines[start:end]) + "\n")
        found.append(Block(m.group(1), start + 1, code, i, end, directive=directive))
        i = end + 1
    # Pair each python block (and each bash block run against the proxy) with a text block that follows it directly.
    paired: list[Block] = []
    for n, b in enumerate(found):
        if b.lang != "python" and not (b.lang == "bash" and b.directive and b.directive[0] == "proxy-replies"):
            continue
        nxt = found[n + 1] if n + 1 < len(found) else None
        if nxt is not None and nxt.lang == "text":
            if all(not s.strip() for s in lines[b.closes + 1 : nxt.opens]):
                b.output = nxt.code
        paired.append(b)
    return paired


def normalise(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.splitlines()).rstrip("\n")


def replies(spec: str) -> list[Reply]:
    script = []
    for name in spec.split():
        path = ROOT / name
        assert path.is_file(), f"ollama-replies names {name}, which does not exist"
        if path.suffix == ".ndjson":
            lines = [s.encode() + b"\n" for s in path.read_text().splitlines() if s.strip()]
            script.append(Reply(lines=lines))
        elif path.suffix == ".sse":
            events = [e.strip().encode() + b"\n\n" for e in path.read_text().split("\n\n") if e.strip()]
            script.append(Reply(lines=events, content_type="text/event-stream"))
        else:
            script.append(Reply(body=json.loads(path.read_text())))
    return script


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_against_proxy(block: Block) -> str:
    """A bash block run against a real ``toolmend proxy`` whose upstream is the scripted server (see the module's
    note); the proxy is stopped after it."""
    port = free_port()
    with ScriptedOllama(replies(block.directive[1])) as server:  # type: ignore[index]
        command = [sys.executable, "-c", "import sys; from toolmend.cli import main; sys.exit(main())"]
        proxy = subprocess.Popen([*command, "proxy", "--upstream", server.url, "--port", str(port)])
        try:
            deadline = time.monotonic() + 30
            while True:  # until the proxy listens
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=1):
                        break
                except OSError:
                    assert proxy.poll() is None and time.monotonic() < deadline, "toolmend proxy did not start"
                    time.sleep(0.05)
            code = block.code.replace(PROXY_ADDRESS, f"127.0.0.1:{port}")
            done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", code], capture_output=True, text=True, timeout=60)
        finally:
            proxy.terminate()
            proxy.wait(timeout=30)
    assert done.returncode == 0, f"the block failed ({done.returncode}): {done.stderr}"
    return done.stdout


def run_block(block: Block, namespace: dict[str, Any], page: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    if block.lang == "bash":
        return run_against_proxy(block)
    # Leading newlines make a traceback's line numbers those of the page.
    code = compile("\n" * (block.line - 1) + block.code, str(page), "exec")
    out = io.StringIO()
    with contextlib.ExitStack() as stack:
        if block.directive and block.directive[0] in ("ollama-replies", "openai-replies"):
            server = stack.enter_context(ScriptedOllama(replies(block.directive[1].partition("; requires:")[0])))
            monkeypatch.setenv("OLLAMA_HOST", server.url)
            monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        stack.enter_context(contextlib.redirect_stdout(out))
        exec(code, namespace)
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return out.getvalue()


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_examples_run_and_print_what_the_page_shows(page: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    # Else importing litellm (docs/integrations.md) fetches a price list from the network.
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    for block in blocks(page.read_text(encoding="utf-8")):
        where = f"{page.relative_to(ROOT)}:{block.line}"
        if block.directive and block.directive[0] == "no-run":
            assert block.directive[1], f"{where}: no-run needs a reason"
            continue
        required = block.directive[1].partition("; requires:")[2].strip() if block.directive else ""
        if required:
            try:
                importlib.import_module(required)
            except ImportError:
                continue  # an optional dependency not installed here
        printed = run_block(block, namespace, page, monkeypatch)
        if block.output is None:
            assert printed == "", f"{where}: the block prints, but no ```text block shows it:\n{printed}"
        else:
            assert normalise(printed) == normalise(block.output), f"{where}: printed output differs from the page"


def test_usage_pages_keep_runnable_examples() -> None:
    # The landing page and the usage pages teach by example; a page that lost all its examples
    # (a fence typo, say) would pass the test above without checking anything.
    for name in ["README.md", "docs/api.md", "docs/repair.md", "docs/streaming.md", "docs/client.md"]:
        page = ROOT / name
        runnable = [b for b in blocks(page.read_text(encoding="utf-8")) if not (b.directive and b.directive[0] == "no-run")]
        assert runnable, f"{name} has no runnable python block"


def test_readme_is_a_landing_page() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move detail to docs/"


def test_readme_test_command_is_what_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "bash .ci/run" in readme
    assert (ROOT / ".ci" / "run").is_file()


LINK = re.compile(r"\]\(([^)\s]+)\)")
# Generated from the error catalogue by its own tooling; pages link to it by code.
GENERATED = {"docs/errors.md"}


@pytest.mark.parametrize("page", PAGES + [ROOT / "benches" / "README.md"], ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_point_at_files_that_exist(page: Path) -> None:
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if "://" in target or target.startswith(("#", "mailto:")):
            continue
        path = (page.parent / target.split("#", 1)[0]).resolve()
        rel = os.path.relpath(path, ROOT)
        assert path.exists() or rel in GENERATED, f"{page.relative_to(ROOT)} links to {target}, which does not exist"


def test_blocks_pair_python_with_the_text_block_right_after_it() -> None:
    page = "\n".join(
        [
            "<!-- no-run: needs a GPU -->",
            "```python",
            "print(1)",
            "```",
            "",
            "```text",
            "1",
            "```",
            "Some prose.",
            "```python",
            "x = 2",
            "```",
            "Prose between: this text block is not the output of the block above.",
            "```text",
            "2",
            "```",
            "- a list item:",
            "  ```python",
            "  print('indented')",
            "  ```",
            "  ```text",
            "  indented",
            "  ```",
        ]
    )
    found = blocks(page)
    assert [(b.line, b.code, b.output, b.directive) for b in found] == [
        (3, "print(1)\n", "1\n", ("no-run", "needs a GPU")),
        (11, "x = 2\n", None, None),
        (19, "print('indented')\n", "indented\n", None),
    ]
