"""The agent loop (``client.run``): chat, run the calls the model made, send their results back, until the model
answers without calls or the turns run out.

Each turn is one ``chat``: its failed calls are reflected to the model and retried there, as in any chat, and
only calls that passed come back to run. A tool that raises, or that cannot run, is not the end of the loop: its
error goes back to the model as the call's result (``is_error`` where the provider has it), for the model to
correct on its next turn. Errors of the chat itself (RetryExhaustedError, ModelHTTPError, ...) end the loop as
they end a chat. The calls of one reply run one after another, in the order the model made them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Mapping, Sequence

from toolmend.client.events import ChatResult
from toolmend.client.ledger import Usage
from toolmend.tool_run import ToolResult

if TYPE_CHECKING:
    from toolmend.client.engine import Engine, Tools

__all__ = ["RunResult", "agent_loop"]

#: Why a loop ended: the model answered without calls, or ``max_turns`` chats were spent.
StopReason = Literal["answer", "max_turns"]


@dataclass(frozen=True)
class RunResult:
    """What an agent loop ended with: the final ``answer`` (the last reply's text), the ``messages`` of the whole
    conversation in the provider's form (the caller's, then each assistant message and the tool results that
    answered it: ready to send again to go on), each turn's ChatResult in ``chats``, every ``tool_results``, and
    ``stop_reason``: "answer", or "max_turns" when the turns ran out first (``finished`` is False then; the last
    turn's calls have run and their results end ``messages``)."""

    answer: str
    messages: list[dict[str, Any]]
    chats: tuple[ChatResult, ...]
    tool_results: tuple[ToolResult, ...]
    stop_reason: StopReason

    @property
    def finished(self) -> bool:
        """True when the model gave its answer (a reply with no calls) within ``max_turns``."""
        return self.stop_reason == "answer"

    @property
    def turns(self) -> int:
        """How many chats the loop made."""
        return len(self.chats)

    @property
    def usage(self) -> Usage:
        """Tokens and time over every chat of the loop."""
        total = Usage()
        for chat in self.chats:
            total = total + chat.usage
        return total


async def agent_loop(
    client: Engine, messages: Sequence[Mapping[str, Any]], tools: Tools, fields: Mapping[str, Any], max_turns: int
) -> RunResult:
    """Runs the loop on ``client`` (see the module's note); ``messages`` is never modified."""
    registry = client.registry
    if registry is None or not callable(getattr(registry, "arun", None)):
        raise ValueError("run() needs a client made with a toolmend.ToolRegistry: its tools' functions are what run")
    if max_turns < 1:
        raise ValueError(f"max_turns must be at least 1, not {max_turns}")
    history = [dict(m) for m in messages]
    chats: list[ChatResult] = []
    results: list[ToolResult] = []
    for _ in range(max_turns):
        chat = await client._chat(history, tools, fields)
        chats.append(chat)
        history.append(chat.message)
        if not chat.tool_calls:
            return RunResult(chat.text, history, tuple(chats), tuple(results), "answer")
        for call in chat.tool_calls:
            result = await registry.arun(call)
            results.append(result)
            history.append(dict(result.to_ollama() if client.provider == "ollama" else result.to_openai()))
    return RunResult(chats[-1].text, history, tuple(chats), tuple(results), "max_turns")
