"""Compressed replies: the size cap holds on decoded bytes, read by read, whatever the Content-Encoding stacks.

httpx decoded a whole chunk, every layer of it, before the client counted a byte: ``gzip, gzip, gzip`` around
gigabytes of zeros is a few hundred bytes on the wire. The client now reads raw bytes and inflates them through
bounded decompressors (toolmend.client.decoding). The decoder alone under hypothesis, then the clients over real
HTTP against the loopback server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import tracemalloc
import zlib
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ollama_server import Reply, ScriptedOllama
from toolmend.client.decoding import ACCEPT_ENCODING, MAX_LAYERS, STEP, Decoder, ReplyTooLarge, UndecodableReply
from toolmend.config import RetryConfig
from toolmend.errors import ModelHTTPError
from wires import PROVIDERS, WIRES, Wire, read_file_registry

GOOD = {"name": "read_file", "arguments": {"path": "a.txt"}}
MIB = 1 << 20


def encode(data: bytes, name: str) -> bytes:
    """``data`` in one layer of ``name``: gzip, deflate as RFC 9110 says (zlib-wrapped), or "raw" deflate."""
    wbits = {"gzip": 31, "deflate": 15, "raw": -15}[name]
    z = zlib.compressobj(9, zlib.DEFLATED, wbits)
    return z.compress(data) + z.flush()


def zeros_gzipped(mib: int, layers: int) -> bytes:
    """``mib`` MiB of zeros gzipped ``layers`` times, the first layer made a MiB at a time (never held whole)."""
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = bytes(MIB)
    body = b"".join(z.compress(chunk) for _ in range(mib)) + z.flush()
    for _ in range(layers - 1):
        body = encode(body, "gzip")
    return body


#: 64 MiB of zeros, gzipped three times: a few hundred bytes on the wire.
BOMB = zeros_gzipped(64, 3)


def decode(decoder: Decoder, raw: bytes, cuts: list[int]) -> bytes:
    """``raw`` fed to ``decoder`` in pieces cut at ``cuts``."""
    bounds = [0, *sorted(c % (len(raw) + 1) for c in cuts), len(raw)]
    return b"".join(part for a, b in zip(bounds, bounds[1:]) for part in decoder.feed(raw[a:b]))


# ---- the decoder alone ------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    data=st.binary(max_size=5000) | st.builds(lambda b, n: b * n, st.binary(min_size=1, max_size=8), st.integers(1, 3000)),
    names=st.lists(st.sampled_from(["gzip", "deflate", "raw"]), min_size=1, max_size=MAX_LAYERS),
    cuts=st.lists(st.integers(min_value=0), max_size=12),
)
def test_any_bytes_through_stacked_layers_and_any_cuts_come_back(data: bytes, names: list[str], cuts: list[int]) -> None:
    raw = data
    for name in names:  # applied in the order listed
        raw = encode(raw, name)
    header = ", ".join("deflate" if n == "raw" else n for n in names)
    assert decode(Decoder(header, 1 << 30), raw, cuts) == data


@settings(max_examples=200, deadline=None)
@given(
    data=st.binary(max_size=3000) | st.builds(lambda n: bytes(n), st.integers(0, 300_000)),
    layers=st.integers(0, MAX_LAYERS),
    limit=st.integers(1, 20_000),
    cuts=st.lists(st.integers(min_value=0), max_size=8),
)
def test_past_the_cap_is_refused_and_never_given_out(data: bytes, layers: int, limit: int, cuts: list[int]) -> None:
    # Every stage is held to the cap: the bytes as sent, each layer as decoded, the body.
    stages = [data]
    for _ in range(layers):
        stages.append(encode(stages[-1], "gzip"))
    decoder = Decoder(", ".join(["gzip"] * layers), limit)
    given_out = 0
    bounds = [0, *sorted(c % (len(stages[-1]) + 1) for c in cuts), len(stages[-1])]
    try:
        for a, b in zip(bounds, bounds[1:]):
            for part in decoder.feed(stages[-1][a:b]):
                given_out += len(part)
    except ReplyTooLarge as e:
        assert max(map(len, stages)) > limit and e.limit == limit and e.size > limit
        if "decoded" in str(e):
            assert e.size == limit + 1  # a layer stops one byte past the cap
        assert given_out <= limit
        assert all(layer.size <= limit + 1 for layer in decoder.layers)  # no layer ran past the cap
    else:
        assert max(map(len, stages)) <= limit and given_out == len(data)


def test_a_bomb_is_refused_after_the_cap_with_little_memory() -> None:
    tracemalloc.start()
    try:
        decoder = Decoder("gzip, gzip, gzip", MIB)
        out = 0
        with pytest.raises(ReplyTooLarge) as excinfo:
            for part in decoder.feed(BOMB):
                assert len(part) <= STEP
                out += len(part)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(BOMB) < 1000 and out == MIB and excinfo.value.size == MIB + 1
    assert "decoded (Content-Encoding: gzip, gzip, gzip)" in str(excinfo.value)
    assert peak < 4 * MIB  # nothing of a step is kept: the 64 MiB never exist


def test_gzip_members_one_after_another_are_one_body() -> None:
    raw = encode(b"first ", "gzip") + encode(b"second", "gzip")
    assert decode(Decoder("gzip", MIB), raw, [3, 25, 31]) == b"first second"


@pytest.mark.parametrize(
    ("header", "says"),
    [
        ("br", "'br'"),
        ("gzip, zstd", "'zstd'"),
        ("compress", "'compress'"),
        ("gzip, gzip, gzip, gzip", f"stacks 4 encodings: at most {MAX_LAYERS}"),
    ],
)
def test_an_encoding_not_decoded_is_refused_before_reading(header: str, says: str) -> None:
    with pytest.raises(UndecodableReply) as excinfo:
        Decoder(header, MIB, 200)
    error = excinfo.value.error()
    assert error.code == "TLP-009" and error.status == 200 and says in error.message
    if "stacks" not in says:
        assert "decodes gzip and deflate only" in error.message and header in error.message


def test_identity_and_case_and_spaces_are_read_as_meant() -> None:
    assert decode(Decoder(" Identity , GZIP ", MIB), encode(b"x" * 100, "gzip"), [1]) == b"x" * 100
    assert decode(Decoder("x-gzip", MIB), encode(b"y", "gzip"), []) == b"y"


def test_a_body_its_encoding_cannot_read_is_a_coded_error() -> None:
    with pytest.raises(UndecodableReply) as excinfo:
        list(Decoder("gzip", MIB, 200).feed(b"this is not gzip at all"))
    assert excinfo.value.error().code == "TLP-009" and "gzip encoding does not decode" in excinfo.value.message


# ---- the clients over HTTP --------------------------------------------------------------------------


def compressed(reply: Reply, name: str) -> Reply:
    """``reply`` sent in ``name``: a whole body compressed, or a stream compressed line by line (each line
    flushed as it goes, as a server compressing a stream does) and sent one compressed line per write."""
    wbits = {"gzip": 31, "deflate": 15}[name]
    z = zlib.compressobj(6, zlib.DEFLATED, wbits)
    if reply.lines is None:
        body = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
        return Reply(body=z.compress(body) + z.flush(), headers={"content-encoding": name})
    lines = [line if isinstance(line, bytes) else json.dumps(line).encode() + b"\n" for line in reply.lines]
    pieces = [z.compress(line) + z.flush(zlib.Z_SYNC_FLUSH) for line in lines] + [z.flush()]
    return Reply(lines=pieces, headers={"content-encoding": name}, content_type=reply.content_type)


def bomb_reply(wire: Wire, encoding: str = "gzip, gzip, gzip", body: bytes = BOMB) -> Reply:
    if wire.streamed:
        return Reply(lines=[body], headers={"content-encoding": encoding})
    return Reply(body=body, headers={"content-encoding": encoding})


@pytest.mark.parametrize("wire", WIRES, ids=str)
@pytest.mark.parametrize("name", ["gzip", "deflate"])
def test_compressed_replies_and_streams_read_as_before(wire: Wire, name: str) -> None:
    with ScriptedOllama([compressed(wire.calls(GOOD, text="hello "), name)]) as server:
        result = wire.run(server, read_file_registry())
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("read_file", {"path": "a.txt"})]
    assert [a.lane for a in result.attempts] == ["ok"]


@pytest.mark.parametrize("wire", WIRES, ids=str)
def test_a_stacked_gzip_bomb_is_refused_at_the_cap_without_growing_the_client(wire: Wire) -> None:
    tracemalloc.start()
    try:
        with ScriptedOllama([bomb_reply(wire)]) as server, pytest.raises(ModelHTTPError) as excinfo:
            wire.run(server, read_file_registry(), max_response_bytes=MIB)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    error = excinfo.value
    assert error.code == "TLP-007" and f"{MIB + 1} bytes decoded" in error.message
    assert len(server.requests) == 1  # not retried: the same reply would come again
    # The body decodes to 64 MiB; reading stops one byte past the 1 MiB cap (generous bound for the rest).
    assert peak < 20 * MIB


@pytest.mark.parametrize("wire", WIRES, ids=str)
def test_an_encoding_not_decoded_is_a_coded_error_and_not_retried(wire: Wire) -> None:
    with ScriptedOllama([bomb_reply(wire, "br", b"\x0b\x02\x80hello\x03")]) as server, pytest.raises(ModelHTTPError) as excinfo:
        wire.run(server, read_file_registry())
    error = excinfo.value
    assert error.code == "TLP-009" and error.status == 200
    assert "'br'" in error.message and "gzip and deflate only" in error.message
    assert len(server.requests) == 1


@pytest.mark.parametrize("wire", PROVIDERS, ids=str)
def test_requests_ask_only_for_what_is_decoded(wire: Wire) -> None:
    with ScriptedOllama([wire.calls(GOOD)]) as server:
        wire.run(server, read_file_registry())
    assert server.requests[0]["headers"]["accept-encoding"] == ACCEPT_ENCODING == "gzip, deflate"


def test_a_callers_headers_and_http_client_cannot_widen_it_and_raw_bytes_are_still_read() -> None:
    from toolmend.client import OpenAICompatibleClient

    async def go(server: ScriptedOllama) -> Any:
        # httpx would send "gzip, deflate, zstd" (zstandard is installed here, say); the caller asks for br.
        async with httpx.AsyncClient(headers={"accept-encoding": "br, zstd"}) as http:
            async with OpenAICompatibleClient(
                server.url + "/v1", "m", None, read_file_registry(), RetryConfig(max_response_bytes=MIB),
                http_client=http, headers={"Accept-Encoding": "br"},
            ) as client:
                return await client.chat([{"role": "user", "content": "go"}])

    with ScriptedOllama([bomb_reply(Wire("openai", False))]) as server, pytest.raises(ModelHTTPError) as excinfo:
        asyncio.run(go(server))
    assert excinfo.value.code == "TLP-007"
    assert server.requests[0]["headers"]["accept-encoding"] == "gzip, deflate"
