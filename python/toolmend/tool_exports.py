"""A registry's tools as each SDK takes them (``ToolRegistry.to_openai_tools``, ``to_ollama_tools``,
``to_anthropic_tools``): the wire shapes, typed with the SDKs' own parameter types.

The OpenAI and Anthropic lists are typed as ``openai``'s ``ChatCompletionToolParam`` and ``anthropic``'s
``ToolParam``, imported for type checkers only: a list given to the SDK's ``tools=`` passes ``mypy --strict``
whatever fields the SDK's version adds (a copy of its TypedDict here would stop matching at its next release).
Where the SDK is not installed, a type checker sees ``Any`` (errors in an installed package are not reported).
Ollama's SDK takes any mapping: its shape is typed here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Literal, TypedDict

if TYPE_CHECKING:
    from anthropic.types import ToolParam
    from openai.types.chat import ChatCompletionToolParam

    from toolmend._core import ToolInfo

__all__ = ["OllamaFunction", "OllamaTool", "anthropic_tools", "ollama_tools", "openai_tools"]


class OllamaFunction(TypedDict):
    """The ``function`` of an Ollama tool: its name, description and parameter schema."""

    name: str
    description: str
    parameters: dict[str, Any]


class OllamaTool(TypedDict):
    """An Ollama ``/api/chat`` tool: ``{"type": "function", "function": {...}}``."""

    type: Literal["function"]
    function: OllamaFunction


def openai_tools(infos: Iterable[ToolInfo]) -> list[ChatCompletionToolParam]:
    """Chat Completions tools: ``{"type": "function", "function": {"name", "description", "parameters"}}``
    (the description left out when there is none)."""
    tools: list[ChatCompletionToolParam] = []
    for info in infos:
        if info.description:
            tools.append(
                {
                    "type": "function",
                    "function": {"name": info.name, "description": info.description, "parameters": info.schema},
                }
            )
        else:
            tools.append({"type": "function", "function": {"name": info.name, "parameters": info.schema}})
    return tools


def ollama_tools(infos: Iterable[ToolInfo]) -> list[OllamaTool]:
    """Ollama tools: the OpenAI shape, which ``/api/chat`` reads (its ``Tool.Function``)."""
    return [
        {"type": "function", "function": {"name": i.name, "description": i.description, "parameters": i.schema}}
        for i in infos
    ]


def anthropic_tools(infos: Iterable[ToolInfo]) -> list[ToolParam]:
    """Anthropic Messages tools: ``{"name", "description", "input_schema"}`` (the description left out when
    there is none)."""
    tools: list[ToolParam] = []
    for info in infos:
        if info.description:
            tools.append({"name": info.name, "description": info.description, "input_schema": info.schema})
        else:
            tools.append({"name": info.name, "input_schema": info.schema})
    return tools
