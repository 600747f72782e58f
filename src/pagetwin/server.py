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

Requests are answered one at a time, in the event loop's thread (fingerprinting is CPU-bound
Python: threads would only take turns at the GIL); the index's SQLite connection is used by
that thread alone. The server holds the index's lock (one writer); ``readonly`` serves an index
without it (POST /add then answers 403), and any number of read-only servers and ``pagetwin
query`` runs may read one index while a writer adds to it (SQLite WAL).
"""

from __future__ import annotations

import hmac
import json
import socket
import sys
import time
from typing import Any

from pagetwin.config import ConfigError

TOKEN_ENV = "PAGETWIN_SERVE_TOKEN"
DEFAULT_PORT = 8765
MAX_BODY = 16 * 1024 * 1024  # bytes of one request body
MAX_BATCH = 1000  # pages of one request
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


def create_app(index: Any, token: str | None = None, max_body: int = MAX_BODY, max_batch: int = MAX_BATCH) -> Any:
    """The ASGI application over an open ``pagetwin.api.Index``."""
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
        results = [r.to_dict() for r in _checked(lambda: list(index.query_many(pages)))]
        counters["queries"] += len(results)
        return {"results": results} if batch else results[0]

    async def add(request: Any) -> dict[str, Any]:
        if not index.writable:
            raise _Refused(403, "this server's index is read only (pagetwin serve --readonly)")
        pages, batch = _pages(await _json_body(request, max_body), max_batch)
        added = [a.to_dict() for a in _checked(lambda: index.add(pages, on_error="raise"))]
        counters["adds"] += 1
        counters["pages_added"] += sum(1 for a in added if a["status"] == "added")
        return {"added": added} if batch else added[0]

    async def page(request: Any) -> dict[str, Any]:
        found = index.get(request.path_params["ref"])
        if found is None:
            raise _Refused(404, f"no page {request.path_params['ref']!r} in the index (by id, nor by URL)")
        return found

    async def health(request: Any) -> dict[str, Any]:
        return {"status": "ok", "pages": len(index)}

    async def stats(request: Any) -> dict[str, Any]:
        return {"index": index.stats(), "server": {**counters, "uptime_seconds": round(time.time() - counters["started"], 1)}}

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
) -> None:
    """Serve the index at ``index_path`` until interrupted (SIGINT/SIGTERM), then close it."""
    require_serve_extra()
    check_binding(host, token)
    import uvicorn

    from pagetwin.api import Index

    index = Index.open(index_path, readonly=readonly)
    try:
        sock = listening_socket(host, port)
        shown = f"[{host}]" if ":" in host else host
        log(f"pagetwin serve: listening on http://{shown}:{sock.getsockname()[1]} (index {index_path}, {len(index)} pages"
            f"{', read only' if readonly else ''}{', bearer token required' if token else ''})")  # fmt: skip
        config = uvicorn.Config(create_app(index, token, max_body, max_batch), log_level="warning", access_log=False)
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        index.close()


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
