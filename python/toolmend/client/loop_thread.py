"""An event loop on a thread of its own, for the sync clients: the async engine runs there and the caller's thread
waits for it. Never ``asyncio.run`` in the caller's thread, which fails where a loop already runs (a notebook, an
async web framework calling sync code) and would make a new loop, and new connections, for every call.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, AsyncGenerator, Coroutine, TypeVar

T = TypeVar("T")

_END = object()


class LoopThread:
    """A private event loop running on a daemon thread from construction until ``close``."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._main, name=name, daemon=True)
        self.closed = False
        self.thread.start()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            try:
                _cancel_all(self.loop)
                self.loop.run_until_complete(self.loop.shutdown_asyncgens())
                self.loop.run_until_complete(self.loop.shutdown_default_executor())
            finally:
                asyncio.set_event_loop(None)
                self.loop.close()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Runs ``coroutine`` on the loop and waits for its value (or its exception). An interrupt while waiting
        (KeyboardInterrupt) cancels it there before it propagates here."""
        if self.closed:
            coroutine.close()
            raise RuntimeError("the client is closed")
        if threading.current_thread() is self.thread:
            coroutine.close()
            raise RuntimeError(
                "a sync client was called from its own event loop (an async tool or hook): use the async client there"
            )
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()  # done already: nothing; still running (an interrupt here): cancelled on the loop
            raise

    def next(self, stream: AsyncGenerator[T, None]) -> T | object:
        """The stream's next item, or ``END`` once it is over."""
        return self.run(_next(stream))

    def close_stream(self, stream: AsyncGenerator[Any, None]) -> None:
        """Closes a stream left unfinished (its connection is released), from any thread."""
        if self.closed:
            return
        if threading.current_thread() is self.thread:  # a generator collected on the loop's own thread
            self.loop.create_task(stream.aclose())
            return
        self.run(stream.aclose())

    def close(self) -> None:
        """Stops the loop (tasks still on it are cancelled) and waits for its thread to end."""
        if self.closed:
            return
        self.closed = True
        self.loop.call_soon_threadsafe(self.loop.stop)
        if threading.current_thread() is not self.thread:
            self.thread.join()


END = _END


async def _next(stream: AsyncGenerator[T, None]) -> T | object:
    # StopAsyncIteration would not cross concurrent.futures cleanly: the end is a value.
    try:
        return await stream.__anext__()
    except StopAsyncIteration:
        return _END


def _cancel_all(loop: asyncio.AbstractEventLoop) -> None:
    """Cancels the tasks left on the loop and lets them finish, as ``asyncio.run`` does at its end."""
    tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in tasks:
        task.cancel()
    if tasks:
        loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
