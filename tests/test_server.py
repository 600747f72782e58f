"""pagetwin serve over real HTTP on loopback (issue 17, items 3 and 5): the endpoints end to end,
bearer-token auth, size limits and malformed requests (4xx with a reason, never a 500), and a
kill -9 during adds losing no answered add."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

pytest.importorskip("starlette", reason="the serve extra (starlette, uvicorn) is not installed")
pytest.importorskip("uvicorn", reason="the serve extra (starlette, uvicorn) is not installed")

from pagetwin.api import Index  # noqa: E402
from pagetwin.config import ConfigError  # noqa: E402
from pagetwin.server import TOKEN_ENV, openapi_document, require_serve_extra  # noqa: E402
from tests.fixtures.news import article, page  # noqa: E402


_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: no proxy from the environment


class Server:
    """``pagetwin serve`` in a child process on a free port of 127.0.0.1."""

    def __init__(self, index_path, *args, token=None):
        env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
        if token:
            env[TOKEN_ENV] = token
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pagetwin", "serve", "--index", str(index_path), "--port", "0", *args],
            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env, text=True,
        )  # fmt: skip
        line = self.proc.stderr.readline()
        if "listening on" not in line:
            self.proc.kill()
            raise AssertionError(f"the server did not start: {line}{self.proc.stderr.read()}")
        self.base = line.split("listening on ")[1].split()[0]

    def call(self, method, path, body=None, raw=None, headers=None):
        """(status, JSON answer) of one request."""
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=headers or {})
        try:
            with _OPENER.open(req, timeout=60) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.proc.stderr.close()


@pytest.fixture
def server(tmp_path):
    started = []

    def start(*args, token=None, index=None):
        s = Server(index or tmp_path / "index.sqlite", *args, token=token)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


def _story():
    story = article(1)
    near = list(story)
    near[2] = near[2].replace(".", ", officials said.", 1)
    return page("Harbour bridge reopens", story), page("Harbour bridge reopens", near)


def test_endpoints_end_to_end(server):
    s = server()
    html, near = _story()
    assert s.call("GET", "/health") == (200, {"status": "ok", "pages": 0})
    status, added = s.call("POST", "/add", {"url": "https://news.example/bridge?id=1", "html": html})
    assert status == 200 and added["status"] == "added" and added["cluster_size"] == 1
    others = [{"id": f"o{i}", "url": f"https://news.example/s{i}", "html": page(f"Story {i}", article(100 + i))} for i in range(4)]
    status, batch = s.call("POST", "/add", {"pages": others})
    assert status == 200 and [a["id"] for a in batch["added"]] == ["o0", "o1", "o2", "o3"]
    status, result = s.call("POST", "/query", {"url": "https://mirror.example/bridge", "html": near})
    assert status == 200 and [(m["id"], m["kind"]) for m in result["matches"]] == [("https://news.example/bridge?id=1", "duplicate")]
    status, results = s.call("POST", "/query", {"pages": [{"id": "q", "html": html}, {"id": "n", "html": page("New", article(9))}]})
    assert [r["id"] for r in results["results"]] == ["q", "n"] and results["results"][0]["matches"][0]["kind"] == "exact"
    assert results["results"][1]["matches"] == []
    status, stored = s.call("GET", "/pages/" + urllib.parse.quote("https://news.example/bridge?id=1", safe=""))
    assert status == 200 and article(1)[0][:30] in stored["text"] and stored["cluster_size"] == 1
    assert s.call("GET", "/pages/o2")[1]["url"] == "https://news.example/s2"
    status, missing = s.call("GET", "/pages/nothing-here")
    assert status == 404 and "nothing-here" in missing["error"]
    status, stats = s.call("GET", "/stats")
    assert stats["index"]["pages"] == 5 and stats["server"]["queries"] == 3 and stats["server"]["pages_added"] == 5
    status, spec = s.call("GET", "/openapi.json")
    assert status == 200 and spec["openapi"].startswith("3.1")
    assert set(spec["paths"]) == {"/query", "/add", "/pages/{ref}", "/health", "/stats"}
    assert s.call("GET", "/add")[0] == 405 and s.call("GET", "/nope")[0] == 404


def test_a_token_is_required_when_set(server):
    s = server(token="s3cret")
    page_ = {"url": "https://x.example/", "html": "<p>hello there, a short page of words</p>"}
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic s3cret"}):
        status, answer = s.call("POST", "/add", page_, headers=headers)
        assert status == 401 and "bearer token" in answer["error"]
        assert s.call("GET", "/stats", headers=headers)[0] == 401
    assert s.call("GET", "/health")[0] == 200  # liveness needs no token
    assert s.call("POST", "/add", page_, headers={"Authorization": "Bearer s3cret"})[0] == 200
    assert s.call("GET", "/pages/https:%2F%2Fx.example%2F", headers={"Authorization": "Bearer s3cret"})[0] == 200


def test_another_address_needs_a_token(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
    done = subprocess.run(
        [sys.executable, "-m", "pagetwin", "serve", "--index", str(tmp_path / "i.sqlite"), "--host", "0.0.0.0", "--port", "0"],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and TOKEN_ENV in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "i.sqlite").exists()


def test_oversized_and_malformed_requests_get_a_4xx_with_a_reason(server):
    s = server("--max-body", "5000", "--max-batch", "2")
    small = {"url": "https://x.example/", "html": "<p>a page</p>"}
    cases = [
        ("/add", {"url": "https://x.example/", "html": "<p>" + "word " * 2000 + "</p>"}, None, 413, "5000"),
        ("/add", {"pages": [small, small, small]}, None, 413, "at most 2"),
        ("/query", None, b"{not json", 400, "bad JSON"),
        ("/query", None, b"\xff\xfe\x00", 400, "bad JSON"),
        ("/query", None, b"", 400, "empty body"),
        ("/query", [1, 2], None, 422, "JSON object"),
        ("/add", {"url": "https://x.example/"}, None, 422, "no html or text"),
        ("/add", {"url": "https://x.example/", "html": 7}, None, 422, "html must be a string"),
        ("/add", {"pages": "nope"}, None, 422, "non-empty list"),
        ("/add", {"pages": [small, "nope"]}, None, 422, "page 1"),
        ("/query", None, b"[" * 4000, 400, "bad JSON"),
    ]
    for path, body, raw, status, reason in cases:
        got, answer = s.call("POST", path, body, raw=raw)
        assert (got, reason in answer["error"]) == (status, True), (path, body, raw, answer)
    assert s.call("GET", "/health")[1]["pages"] == 0  # nothing of a refused batch was added
    assert s.call("POST", "/add", small)[0] == 200


def test_a_readonly_server_refuses_adds(server, tmp_path):
    with Index.open(tmp_path / "index.sqlite") as index:
        index.add({"url": "https://x.example/", "html": "<p>a page of a few words</p>"})
    s = server("--readonly")
    status, answer = s.call("POST", "/add", {"url": "https://y.example/", "html": "<p>x</p>"})
    assert status == 403 and "read only" in answer["error"]
    assert s.call("GET", "/health")[1]["pages"] == 1


def test_queries_are_answered_while_an_add_runs(server):
    """Many readers, one writer: a batch add in progress does not hold back the queries, and
    once answered, its pages are what the readers see."""
    s = server("--readers", "2")
    html, near = _story()
    assert s.call("POST", "/add", {"url": "https://news.example/bridge", "html": html})[0] == 200
    batch = [{"id": f"b{i}", "url": f"https://news.example/b{i}", "html": page(f"Story {i}", article(200 + i))} for i in range(150)]
    answer: dict = {}

    def add() -> None:
        answer["started"] = time.monotonic()
        answer["status"], answer["body"] = s.call("POST", "/add", {"pages": batch})
        answer["answered"] = time.monotonic()

    adding = threading.Thread(target=add)
    adding.start()
    answered_at = []
    while adding.is_alive():
        status, result = s.call("POST", "/query", {"url": "https://mirror.example/bridge", "html": near})
        assert status == 200 and result["matches"][0]["id"] == "https://news.example/bridge"
        answered_at.append(time.monotonic())
    adding.join()
    assert answer["status"] == 200 and len(answer["body"]["added"]) == 150
    # Answered in the second half of the add (one request at a time, they would wait for it).
    half = (answer["started"] + answer["answered"]) / 2
    assert sum(half <= t < answer["answered"] for t in answered_at) >= 3, (answer, answered_at)
    assert s.call("GET", "/health")[1]["pages"] == 151 and s.call("GET", "/pages/b149")[0] == 200
    status, again = s.call("POST", "/query", batch[7])
    assert status == 200 and again["matches"][0]["id"] == "b7" and again["matches"][0]["kind"] == "exact"
    assert s.call("GET", "/stats")[1]["index"]["writable"] is True


def test_kill_9_during_adds_loses_no_answered_add(server, tmp_path):
    s = server()
    answered: list[str] = []
    stop = threading.Event()

    def add_forever(t):
        n = 0
        while not stop.is_set():
            pages = [{"id": f"t{t}-{n}-{k}", "url": f"https://x.example/{t}/{n}/{k}", "html": page(f"Story {n}", article(n * 9 + t * 3 + k))}
                     for k in range(3)]  # fmt: skip
            try:
                status, answer = s.call("POST", "/add", {"pages": pages})
            except (urllib.error.URLError, ConnectionError, OSError):
                return
            if status == 200:
                answered.extend(a["id"] for a in answer["added"])
            n += 1

    threads = [threading.Thread(target=add_forever, args=(t,)) for t in range(3)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 120
    while len(answered) < 30 and time.monotonic() < deadline:
        time.sleep(0.05)
    s.proc.send_signal(signal.SIGKILL)  # adds in flight: some sent, none of them answered
    s.proc.wait()
    stop.set()
    for t in threads:
        t.join(60)
    assert len(answered) >= 30
    with Index.open(tmp_path / "index.sqlite") as index:  # reopens for writing: the lock died with it
        missing = [i for i in answered if i not in index]
        assert not missing
        assert len(index) >= len(set(answered)) == len(answered)
        again = index.add({"url": "https://after.example/", "html": page("After", article(5000))})
        assert again[0].status == "added"


def test_the_serve_extra_missing_is_one_helpful_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    with pytest.raises(ConfigError, match=r"pip install 'pagetwin\[serve\]'"):
        require_serve_extra()


def test_the_openapi_document_names_the_limits_and_the_token():
    spec = openapi_document(1000, 7, auth=True)
    assert spec["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    assert "1000" in spec["paths"]["/add"]["post"]["responses"]["413"]["description"]
    assert "securitySchemes" not in openapi_document(1000, 7, auth=False)["components"]


def test_the_readme_serve_example_runs(server, tmp_path):
    """The README's "Serve" shell example, its curl lines run against a server of the same
    index (on a free port: 8765 may be taken), answered 200 with a result and an add."""
    import re
    import shutil
    from pathlib import Path

    if shutil.which("curl") is None:
        pytest.skip("curl is not installed")
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("\n## Serve\n") :]
    (block,) = re.findall(r"```sh\n(.*?)```", section[: section.index("\n## ", 1)], flags=re.S)
    first, *calls = block.strip().splitlines()
    assert first == "pagetwin serve --index out/index.sqlite &" and len(calls) == 2
    (tmp_path / "out").mkdir()
    s = server(index=tmp_path / "out" / "index.sqlite")
    answers = []
    for line in calls:
        line = line.replace("localhost:8765", s.base.removeprefix("http://")) + " -w '\\n%{http_code}'"
        done = subprocess.run(line, shell=True, capture_output=True, text=True, timeout=60, env={**os.environ, "no_proxy": "*"})
        body, status = done.stdout.rsplit("\n", 1)
        assert status == "200", (line, done.stdout, done.stderr)
        answers.append(json.loads(body))
    assert answers[0]["matches"] == [] and answers[0]["url"] == "https://b.example/x"
    assert [a["status"] for a in answers[1]["added"]] == ["added"]
    assert s.call("GET", "/health") == (200, {"status": "ok", "pages": 1})
