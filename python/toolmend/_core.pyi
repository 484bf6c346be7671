"""Type stubs of the compiled module; the public API is in toolmend.repair."""

from typing import Any, Union

__version__: str

_Text = Union[str, bytes, bytearray]
_Error = tuple[str, str, int, str]

def repair(
    text: _Text, max_size: int, max_depth: int, timeout_ms: int
) -> tuple[str | None, list[tuple[str, int]], _Error | None]: ...
def loads(text: _Text, max_size: int, max_depth: int, timeout_ms: int) -> tuple[Any, _Error | None]: ...
def cache_clear() -> None: ...
