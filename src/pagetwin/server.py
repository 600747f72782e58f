"""``pagetwin serve``: one index over HTTP/JSON (Starlette on uvicorn; the ``serve`` extra).

    POST /query        a page, or {"pages": [...]}: its matches in the index (nothing written)
    POST /add          a page, or {"pages": [...]}: added, linked, committed before the answer
    GET  /pages/{id}   a stored page (by id, else by URL) with its main text and cluster
    GET  /health       {"status": "ok", "pages": N}
    GET  /stats        the index's counts and the server's
    GET  /openapi.json the OpenAPI 3.1 description of all of these

A page is what ``pagetwin.api`` takes: {"url", "html"} or {"id", "text"}, with optional "id"
and "metadata". Bound to 127.0.0.1 by default; with a bearer token (``PAGETWIN_SERVE_TOKEN``)
every endpoint but /health and /openapi.json wants ``Authorization: Bearer TOKEN``, and a token
is required to bind another address. A body over ``max_body`` bytes is refused with 413 before
it is read whole, a batch of more than ``max_batch`` pages with 413; bad JSON is 400, a page that
cannot be used (no HTML or text, a field of the wrong type, HTML that cannot be analysed) 422,
each with {"error": reason}: a user's mistake is never a 500.

Many readers, one writer (``Service``): queries, pages and counts are answered in worker
threads, each on one of ``readers`` read-only connections of its own (SQLite WAL: a reader sees
every add committed before its statement, never half of one), while adds are serialised
through the one writable ``pagetwin.api.Index``, used by one writer thread alone. A query no
longer waits for an add in progress, nor for the other queries while SQLite reads or the
native kernels run (fingerprinting in Python still takes turns at the GIL). The server holds
the index's lock (one writer); ``readonly`` serves an index without it (POST /add then answers
403), and any number of read-only servers and ``pagetwin query`` runs may read one index while
a writer adds to it.
"""

from __future__ import annotations

import hmac
import json
import queue
import socket
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pagetwin.config import ConfigError

TOKEN_ENV = "PAGETWIN_SERVE_TOKEN"
DEFAULT_PORT = 8765
MAX_BODY = 16 * 1024 * 1024  # bytes of one request body
MAX_BATCH = 1000  # pages of one request
READERS = 2  # read-only connections answering queries side by side (each ~40 MB: its own fingerprinting models)
LOOPBACK = ("127.0.0.1", "::1", "localhost")


def require_serve_extra() -> None:
    """ConfigError with the install line when Starlette or uvicorn is missing."""
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise ConfigError(
            f"pagetwin serve needs the serve extra ({exc.name} is not installed): pip install 'pagetwin[serve]'"
        ) from None


class _Refused(Exception):
    """A request answered with a 4xx status and a reason."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


class Service:
    """The index behind a server: one writer (a writable ``pagetwin.api.Index`` opened, used
    and closed in one thread of its own: adds run one at a time, in order) and a pool of
    read-only ``Index`` connections (each used by one thread at a time) for everything else."""

    def __init__(self, index_path: str, readonly: bool = False, readers: int = READERS) -> None:
        from pagetwin.api import Index

        self.readonly = readonly
        self._writer_thread = None if readonly else ThreadPoolExecutor(1, thread_name_prefix="pagetwin-writer")
        self._writer = None if self._writer_thread is None else self._writer_thread.submit(Index.open, index_path).result()
        self._readers: queue.Queue = queue.Queue()
        try:
            for _ in range(max(1, readers)):  # opened after the writer: it created the file, and its WAL
                self._readers.put(Index.open(index_path, readonly=True, live=True))
        except BaseException:
            self.close()
            raise

    async def read(self, call: Any) -> Any:
        """``call(index)`` on a free read-only index, in a worker thread."""
        from starlette.concurrency import run_in_threadpool

        return await run_in_threadpool(self._with_reader, call)

    def _with_reader(self, call: Any) -> Any:
        index = self._readers.get()
        try:
            return call(index)
        finally:
            self._readers.put(index)

    async def write(self, call: Any) -> Any:
        """``call(index)`` on the writable index, in the writer's thread, after the calls
        before it."""
        import asyncio

        return await asyncio.wrap_future(self._writer_thread.submit(call, self._writer))

    def close(self) -> None:
        """Close the readers, then the writer in its thread (its lock released)."""
        while not self._readers.empty():
            self._readers.get_nowait().close()
        if self._writer_thread is not None:
            if self._writer is not None:
                self._writer_thread.submit(self._writer.close).result()
            self._writer_thread.shutdown()


def create_app(service: Service, token: str | None = None, max_body: int = MAX_BODY, max_batch: int = MAX_BATCH) -> Any:
    """The ASGI application over an open ``Service``."""
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    counters = {"started": time.time(), "queries": 0, "adds": 0, "pages_added": 0, "refused": 0}

    def refused(status: int, reason: str, headers: dict[str, str] | None = None) -> JSONResponse:
        counters["refused"] += 1
        return JSONResponse({"error": reason}, status_code=status, headers=headers)

    def handler(fn: Any, open_access: bool = False) -> Any:
        async def endpoint(request: Any) -> Any:
            if token and not open_access and not _authorised(request.headers.get("authorization", ""), token):
                return refused(401, "missing or wrong bearer token", {"WWW-Authenticate": "Bearer"})
            try:
                return JSONResponse(await fn(request))
            except _Refused as exc:
                return refused(exc.status, exc.reason)

        return endpoint

    async def query(request: Any) -> dict[str, Any]:
        pages, batch = _pages(await _json_body(request, max_body), max_batch)
        results = await service.read(lambda index: [r.to_dict() for r in _checked(lambda: list(index.query_many(pages)))])
        counters["queries"] += len(results)
        return {"results": results} if batch else results[0]

    async def add(request: Any) -> dict[str, Any]:
        if service.readonly:
            raise _Refused(403, "this server's index is read only (pagetwin serve --readonly)")
        pages, batch = _pages(await _json_body(request, max_body), max_batch)
        added = await service.write(lambda index: [a.to_dict() for a in _checked(lambda: index.add(pages, on_error="raise"))])
        counters["adds"] += 1
        counters["pages_added"] += sum(1 for a in added if a["status"] == "added")
        return {"added": added} if batch else added[0]

    async def page(request: Any) -> dict[str, Any]:
        found = await service.read(lambda index: index.get(request.path_params["ref"]))
        if found is None:
            raise _Refused(404, f"no page {request.path_params['ref']!r} in the index (by id, nor by URL)")
        return found

    async def health(request: Any) -> dict[str, Any]:
        return {"status": "ok", "pages": await service.read(len)}

    async def stats(request: Any) -> dict[str, Any]:
        counts = {**await service.read(lambda index: index.stats()), "writable": not service.readonly}
        return {"index": counts, "server": {**counters, "uptime_seconds": round(time.time() - counters["started"], 1)}}

    async def openapi(request: Any) -> dict[str, Any]:
        return openapi_document(max_body, max_batch, bool(token))

    async def http_error(request: Any, exc: HTTPException) -> JSONResponse:
        return refused(exc.status_code, str(exc.detail))

    async def server_error(request: Any, exc: Exception) -> JSONResponse:  # a bug, not the user's input
        return JSONResponse({"error": f"internal error: {type(exc).__name__}"}, status_code=500)

    routes = [
        Route("/query", handler(query), methods=["POST"]),
        Route("/add", handler(add), methods=["POST"]),
        Route("/pages/{ref:path}", handler(page), methods=["GET"]),
        Route("/health", handler(health, open_access=True), methods=["GET"]),
        Route("/stats", handler(stats), methods=["GET"]),
        Route("/openapi.json", handler(openapi, open_access=True), methods=["GET"]),
    ]
    return Starlette(routes=routes, exception_handlers={HTTPException: http_error, Exception: server_error})


def _authorised(header: str, token: str) -> bool:
    scheme, _, given = header.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())


async def _json_body(request: Any, max_body: int) -> Any:
    """The request's JSON, read at most ``max_body`` bytes far (413 past it, 400 when bad)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_body:
        raise _Refused(413, f"request body of {declared} bytes; at most {max_body} are taken")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > max_body:
            raise _Refused(413, f"request body over {max_body} bytes")
    if not body:
        raise _Refused(400, "empty body: send a page as JSON, or {\"pages\": [...]}")
    try:
        return json.loads(body)
    except UnicodeDecodeError:
        raise _Refused(400, "bad JSON: the body is not UTF-8") from None
    except (ValueError, RecursionError) as exc:
        raise _Refused(400, f"bad JSON: {str(exc)[:200]}") from None


def _pages(body: Any, max_batch: int) -> tuple[list[Any], bool]:
    """The pages of a body (one page, or {"pages": [...]}) and whether it was a batch."""
    if isinstance(body, dict) and "pages" in body:
        pages = body["pages"]
        if not isinstance(pages, list) or not pages:
            raise _Refused(422, "pages: a non-empty list of pages")
        if len(pages) > max_batch:
            raise _Refused(413, f"{len(pages)} pages in one request; at most {max_batch}")
        return pages, True
    if not isinstance(body, dict):
        raise _Refused(422, "a page is a JSON object: {\"url\", \"html\"} or {\"id\", \"text\"}")
    return [body], False


def _checked(call: Any) -> Any:
    """``call()``, a PageError from it being a 422 with its reason."""
    from pagetwin.api import PageError

    try:
        return call()
    except PageError as exc:
        raise _Refused(422, str(exc)) from None


def listening_socket(host: str, port: int) -> socket.socket:
    """A bound socket (port 0: a free one, which the caller reads back)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)  # from here connections queue until the server accepts them
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def check_binding(host: str, token: str | None) -> None:
    """A bearer token is required to bind an address other machines can reach."""
    if host not in LOOPBACK and not token:
        raise ConfigError(f"binding to {host} needs a bearer token: set {TOKEN_ENV} (only 127.0.0.1 is served without one)")


def serve(
    index_path: str,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    token: str | None = None,
    readonly: bool = False,
    max_body: int = MAX_BODY,
    max_batch: int = MAX_BATCH,
    log: Any = lambda m: print(m, file=sys.stderr, flush=True),
    readers: int = READERS,
) -> None:
    """Serve the index at ``index_path`` until interrupted (SIGINT/SIGTERM), then close it."""
    require_serve_extra()
    check_binding(host, token)
    import uvicorn

    service = Service(index_path, readonly, readers)
    try:
        sock = listening_socket(host, port)
        shown = f"[{host}]" if ":" in host else host
        pages = service._with_reader(len)
        log(f"pagetwin serve: listening on http://{shown}:{sock.getsockname()[1]} (index {index_path}, {pages} pages, {readers} readers"
            f"{', read only' if readonly else ''}{', bearer token required' if token else ''})")  # fmt: skip
        config = uvicorn.Config(create_app(service, token, max_body, max_batch), log_level="warning", access_log=False)
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        service.close()


def openapi_document(max_body: int, max_batch: int, auth: bool) -> dict[str, Any]:
    """The OpenAPI 3.1 description of the service."""
    from pagetwin import __version__

    def ref(name: str) -> dict[str, str]:
        return {"$ref": f"#/components/schemas/{name}"}

    def body(name: str) -> dict[str, Any]:
        batch = {"type": "object", "required": ["pages"], "properties": {"pages": {"type": "array", "maxItems": max_batch, "items": ref("Page")}}}
        return {"required": True, "content": {"application/json": {"schema": {"oneOf": [ref("Page"), batch]}}}}

    def answer(description: str, schema: dict[str, Any]) -> dict[str, Any]:
        return {"description": description, "content": {"application/json": {"schema": schema}}}

    errors = {
        "400": answer("bad JSON", ref("Error")), "401": answer("missing or wrong bearer token", ref("Error")),
        "413": answer(f"body over {max_body} bytes, or over {max_batch} pages", ref("Error")),
        "422": answer("a page that cannot be used", ref("Error")),
    }  # fmt: skip
    security = [{"bearer": []}] if auth else []
    paths = {
        "/query": {"post": {"summary": "The matches of a page (or a batch) in the index; nothing is written",
                            "requestBody": body("Page"), "security": security,
                            "responses": {"200": answer("one QueryResult, or {results: [...]} for a batch", ref("QueryResult")), **errors}}},
        "/add": {"post": {"summary": "Add a page (or a batch): stored, matched, clustered, committed before the answer",
                          "requestBody": body("Page"), "security": security,
                          "responses": {"200": answer("one Added, or {added: [...]} for a batch", ref("Added")),
                                        "403": answer("the index is served read only", ref("Error")), **errors}}},
        "/pages/{ref}": {"get": {"summary": "A stored page by id, else by URL", "security": security,
                                 "parameters": [{"name": "ref", "in": "path", "required": True, "schema": {"type": "string"}}],
                                 "responses": {"200": answer("the page", {"type": "object"}), "404": answer("no such page", ref("Error"))}}},
        "/health": {"get": {"summary": "Liveness", "responses": {"200": answer("ok", {"type": "object"})}}},
        "/stats": {"get": {"summary": "Counts of the index and of the server", "security": security,
                           "responses": {"200": answer("counts", {"type": "object"})}}},
    }  # fmt: skip
    return {
        "openapi": "3.1.0",
        "info": {"title": "pagetwin", "version": __version__, "description": "Duplicate and near-duplicate web pages: one index over HTTP/JSON"},
        "paths": paths,
        "components": {"schemas": _schemas(), **({"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}} if auth else {})},
    }


def _schemas() -> dict[str, Any]:
    s, n = {"type": "string"}, {"type": ["string", "null"]}
    match = {"type": "object", "properties": {"id": s, "url": s, "cluster": n, "kind": {"enum": ["exact", "duplicate", "partial", "revisit"]},
             "evidence": {"type": "array", "items": {"type": "object"}}}}  # fmt: skip
    return {
        "Page": {"type": "object", "description": "html or text is required; id defaults to the url",
                 "properties": {"id": s, "url": s, "html": s, "text": s, "metadata": {"type": "object"}}},
        "QueryResult": {"type": "object", "properties": {"id": s, "url": s, "matches": {"type": "array", "items": match}, "error": s}},
        "Added": {"type": "object", "properties": {"id": s, "url": s, "status": {"enum": ["added", "known"]}, "cluster": n,
                  "keep": {"type": "boolean"}, "kept_id": n, "cluster_size": {"type": "integer"}, "error": n}},
        "Error": {"type": "object", "required": ["error"], "properties": {"error": s}},
    }  # fmt: skip
