"""A reply's body decoded within the size cap: the errors that stop a read, and the bounded decoder.

httpx decodes each network chunk whole, every layer of a stacked ``Content-Encoding`` in full, before the
reader sees a byte: ``Content-Encoding: gzip, gzip, gzip`` around 2 GiB of zeros is a few hundred bytes on the
wire and gigabytes in the client before any cap counts them. So the client reads the raw bytes and inflates
them here, a bounded step at a time: no step gives out more than the room left under the cap (plus one byte,
to see it passed), and every layer, the wire included, is held to the cap, so a bomb in an inner layer is
refused as soon as it passes it too. Requests ask only for what is decoded this way (``ACCEPT_ENCODING``).
"""

from __future__ import annotations

import zlib
from typing import Iterator

from toolmend._log import loggable
from toolmend._states import Code
from toolmend.errors import ModelHTTPError

#: What requests ask for: the encodings decoded here within the cap. Brotli and zstd are left out: their
#: Python decoders give out all of a chunk's output at once, with no bound to hold them to.
ACCEPT_ENCODING = "gzip, deflate"
#: Layers of Content-Encoding decoded at most (a server stacks one); a reply with more is refused.
MAX_LAYERS = 3
#: The most bytes one decompress call gives out: what a layer holds at once.
STEP = 64 * 1024
_GZIP = frozenset({"gzip", "x-gzip"})  # RFC 9110: x-gzip is gzip
_DECODED = _GZIP | {"deflate"}


class UnreadableReply(Exception):
    """A reply the client stops reading, raised while reading; ``error()`` is what the chat raises."""

    code: str = Code.REPLY_NOT_UNDERSTOOD

    def __init__(self, message: str, status: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status

    def error(self) -> ModelHTTPError:
        return ModelHTTPError(self.message, status=self.status, code=self.code)


class ReplyTooLarge(UnreadableReply):
    """A reply body passed ``max_response_bytes`` (as sent, or as decoded); raised while reading, before it
    is all buffered."""

    code = Code.TOO_LARGE

    def __init__(self, size: int, limit: int, status: int | None, decoded: str = "") -> None:
        how = f"decoded ({decoded})" if decoded else "read"
        super().__init__(f"the reply is over the size limit: {size} bytes {how}, max_response_bytes is {limit}", status)
        self.size = size
        self.limit = limit


class UndecodableReply(UnreadableReply):
    """A Content-Encoding the client does not decode, too many of them, or a body its encoding cannot read."""


class _Inflate:
    """One layer of gzip (members one after another, as RFC 1952 allows) or deflate (zlib-wrapped as RFC 9110
    says, or raw as some servers send it, told apart by its first two bytes). It gives out at most ``limit + 1``
    bytes in all, ``STEP`` at a time: its reader refuses the reply once ``size`` passes ``limit``."""

    def __init__(self, name: str, limit: int) -> None:
        self.name = name
        self.gzip = name in _GZIP
        self.limit = limit
        self.size = 0  # bytes given out
        self.head = b""  # deflate: the first bytes, until the wrapper can be told
        self.z = zlib.decompressobj(zlib.MAX_WBITS | 16) if self.gzip else None

    def feed(self, data: bytes) -> Iterator[bytes]:
        if self.z is None:
            self.head += data
            if len(self.head) < 2:
                return
            data, self.head = self.head, b""
            wrapped = data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0
            self.z = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
        z = self.z
        while True:
            if z.eof:
                data = z.unused_data + data
                if not (self.gzip and data):
                    return  # what follows a deflate stream's end is ignored, as httpx does
                z = self.z = zlib.decompressobj(zlib.MAX_WBITS | 16)  # the next gzip member
            room = min(STEP, self.limit + 1 - self.size)  # never 0 (no bound to zlib): refused before
            out = z.decompress(data, room)
            data = z.unconsumed_tail
            if out:
                self.size += len(out)
                yield out
                if self.size > self.limit:
                    return
            # Output short of ``room`` means the input ran out with nothing held back; a full step may have
            # more behind it (even with no input left), so it is asked again.
            if len(out) < room and not z.eof:
                return


class Decoder:
    """``Decoder(content_encoding, limit, status)``; ``feed(raw)`` gives the decoded bytes of each raw piece.
    Encodings are listed in the order applied, so the last is undone first; ``identity`` is no layer."""

    def __init__(self, content_encoding: str, limit: int, status: int | None = None) -> None:
        names = [name.strip().lower() for name in content_encoding.split(",")]
        names = [name for name in names if name not in ("", "identity")]
        said = loggable(content_encoding, 80)
        unknown = [name for name in names if name not in _DECODED]
        if unknown:
            raise UndecodableReply(
                f"the reply's Content-Encoding {said!r} holds {loggable(unknown[0], 40)!r}: the client decodes gzip"
                f" and deflate only (it sends Accept-Encoding: {ACCEPT_ENCODING})",
                status,
            )
        if len(names) > MAX_LAYERS:
            raise UndecodableReply(
                f"the reply's Content-Encoding {said!r} stacks {len(names)} encodings: at most {MAX_LAYERS} are decoded",
                status,
            )
        self.said = said
        self.limit = limit
        self.status = status
        self.layers = [_Inflate(name, limit) for name in reversed(names)]
        self.read = 0  # bytes as sent

    def feed(self, raw: bytes) -> Iterator[bytes]:
        self.read += len(raw)
        if self.read > self.limit:
            raise ReplyTooLarge(self.read, self.limit, self.status)
        return self._through(0, raw)

    def _through(self, depth: int, data: bytes) -> Iterator[bytes]:
        if depth == len(self.layers):
            if data:
                yield data
            return
        layer = self.layers[depth]
        try:
            for piece in layer.feed(data):
                if layer.size > self.limit:
                    raise ReplyTooLarge(layer.size, self.limit, self.status, f"Content-Encoding: {self.said}")
                yield from self._through(depth + 1, piece)
        except zlib.error as e:
            raise UndecodableReply(f"the reply's {layer.name} encoding does not decode: {e}", self.status) from None
