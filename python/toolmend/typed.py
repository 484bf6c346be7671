"""Typed arguments: checked arguments made into a pydantic model, a TypeAdapter's type or a msgspec Struct
(``ToolRegistry.validate(name, args, into=Model)``, ``ToolCall.parse(Model)``). The registry has checked
them already; the model builds its instance once, and a model that refuses them raises toolmend's
ValidationError with FieldErrors carrying codes, like the registry's own. Nothing here imports pydantic
or msgspec: the model says what it is."""

from __future__ import annotations

from typing import Any, TypeVar

from toolmend._core import FieldError
from toolmend.errors import ValidationError
from toolmend._states import Code

M = TypeVar("M")

__all__ = ["into_model"]

#: pydantic error types that mean "a constraint of the field", not "the wrong type".
_CONSTRAINTS = ("greater_than", "less_than", "multiple_of", "too_long", "too_short", "pattern", "literal", "enum", "finite")


def into_model(model: Any, arguments: Any, tool_name: str = "") -> Any:
    """``arguments`` as an instance of ``model`` (a pydantic BaseModel class, a TypeAdapter, a msgspec Struct
    class); raises ValidationError when the model refuses them."""
    if callable(getattr(model, "model_validate", None)):
        return _pydantic(lambda: model.model_validate(arguments), tool_name)
    if callable(getattr(model, "validate_python", None)):
        return _pydantic(lambda: model.validate_python(arguments), tool_name)
    if isinstance(model, type) and hasattr(model, "__struct_fields__"):
        import msgspec  # the caller passed a Struct: msgspec is installed

        try:
            return msgspec.convert(arguments, model)
        except msgspec.ValidationError as e:
            raise ValidationError(tool_name, (_msgspec_error(str(e)),)) from None
    raise TypeError(f"into= takes a pydantic model, a TypeAdapter or a msgspec Struct, not {model!r}")


def _pydantic(build: Any, tool_name: str) -> Any:
    try:
        return build()
    except Exception as e:  # pydantic.ValidationError, without importing pydantic
        if not callable(getattr(e, "errors", None)):
            raise
        raise ValidationError(tool_name, tuple(_pydantic_error(d) for d in e.errors())) from None


def _pydantic_error(detail: Any) -> FieldError:
    kind = str(detail.get("type", ""))
    if kind == "missing":
        code = Code.REQUIRED_MISSING
    elif any(c in kind for c in _CONSTRAINTS):
        code = Code.CONSTRAINT_VIOLATION
    elif kind.endswith(("_type", "_parsing")) or kind in ("model_attributes_type", "dict_type", "list_type"):
        code = Code.TYPE_MISMATCH
    else:
        code = Code.INVALID_ARGUMENTS
    path = _pointer(detail.get("loc", ()))
    message = str(detail.get("msg", kind))
    suggestion = f"give {path or 'the arguments'} a value the model accepts: {message[0].lower() + message[1:]}" if message else ""
    return FieldError(path, code, message, None, _shown(detail.get("input")), suggestion)


def _msgspec_error(text: str) -> FieldError:
    # "Expected `int`, got `str` - at `$.count`" / "Object missing required field `path`"
    message, _, where = text.partition(" - at `")
    path = _pointer([p for p in where.rstrip("`").removeprefix("$").replace("[", ".").replace("]", "").split(".") if p])
    if message.startswith("Object missing required field"):
        code, path = Code.REQUIRED_MISSING, path + "/" + message.rsplit("`", 2)[-2]
    elif message.startswith("Expected"):
        code = Code.TYPE_MISMATCH if "`, got `" in message else Code.CONSTRAINT_VIOLATION
    else:
        code = Code.INVALID_ARGUMENTS
    return FieldError(path, code, message, None, None, f"give a value the model accepts: {message}")


def _pointer(loc: Any) -> str:
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in loc)


def _shown(value: Any) -> str | None:
    if value is None:
        return None
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
