"""``tokstudy serve RESULTS_DIR``: the study's tokenizers segment any typed text, side by
side, in the study page's viewer (standard library ``ThreadingHTTPServer``).

``GET /`` is the playground; ``POST /api/segment`` takes ``{"text": …, "cells": [keys]}``
(UTF-8 JSON, at most :data:`MAX_BODY` bytes) and answers the segmentations; ``GET
/study/<path>`` serves a file of the results folder (the study page and its plots). No file
outside the results folder is read; a bad request gets one 4xx line and the server stays up.

No request ties the server up: the cells a request names are taken once each (so at most
the study's cells), its text is at most :data:`MAX_TEXT` characters, its segmentation stops
at :data:`REQUEST_BUDGET_S` seconds (the answer then says which cells were left out), and a
connection that sends nothing for :data:`IDLE_TIMEOUT_S` seconds is closed. One cell is
segmented at a time, so other clients' requests are served between a request's cells.
"""

from __future__ import annotations

import csv
import json
import mimetypes
import sys
import threading
import time
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from tokstudy.errors import TokstudyError, one_line
from tokstudy.report.page.build import PageCell, cell_json, colours, render, sample_json
from tokstudy.report.page.segments import Sample, SampleLine, base_direction
from tokstudy.tokenizers.cells import PRETRAINED, size_label
from tokstudy.tokenizers.registry import META_FILE

#: largest request body accepted (413 above)
MAX_BODY = 64 * 1024
#: most lines of typed text segmented at once
MAX_LINES = 50
#: most characters of typed text (413 above)
MAX_TEXT = 10_000
#: seconds of segmentation one request may take; the cells after it are left out, noted
REQUEST_BUDGET_S = 5.0
#: seconds a connection may send nothing before the server closes it
IDLE_TIMEOUT_S = 20.0
ANY_LANGUAGE = "any"


class RequestError(Exception):
    """A bad request: its HTTP status and a one-line message."""

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


def discover_cells(results: Path) -> list[PageCell]:
    """The tokenizers of a results folder: every trained cell under ``tokenizers/`` and
    each pretrained tokenizer under ``pretrained/`` for every language of the study."""
    results = Path(results).resolve()
    cells = []
    for meta in sorted(results.glob(f"tokenizers/*/*/*/{META_FILE}")):
        language, tokenizer, size = meta.parent.relative_to(results / "tokenizers").parts
        frequencies = results / "frequencies" / language / tokenizer / f"{size}.tsv"
        cells.append(PageCell(language, tokenizer, size, "trained", meta.parent, frequencies))
    languages = sorted({cell.language for cell in cells}) or [ANY_LANGUAGE]
    for meta in sorted(results.glob(f"pretrained/*/{META_FILE}")):
        name = meta.parent.name
        cells += [
            PageCell(
                language,
                name,
                PRETRAINED,
                "pretrained",
                meta.parent,
                results / "frequencies" / language / name / f"{PRETRAINED}.tsv",
            )
            for language in languages
        ]
    current = current_cells(results)
    if current is not None:
        cells = [c for c in cells if (c.language, c.tokenizer, c.size) in current]
    return [cell for cell in cells if Path(cell.directory).resolve().is_relative_to(results)]


def current_cells(results: Path) -> set[tuple[str, str, str]] | None:
    """The (language, tokenizer, size label) cells of the folder's current config: those of
    its metrics table (``tables/metrics.csv``, rewritten by every run), ``None`` without one
    (then every tokenizer found is listed). Tokenizers of an earlier config left in the
    folder are not among them."""
    table = Path(results) / "tables" / "metrics.csv"
    if not table.is_file():
        return None
    with open(table, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return {
        (
            row["language"],
            row["tokenizer"],
            size_label(row["tokenizer"], row["vocab_size"], row["kind"]),
        )
        for row in rows
    }


class Playground:
    """The served study: its cells, the playground page and the segment requests."""

    def __init__(self, results: Path) -> None:
        self.results = Path(results).resolve()
        if not self.results.is_dir():
            raise TokstudyError(f"{results}: no such results folder")
        self.cells = {cell.key: cell for cell in discover_cells(self.results)}
        if not self.cells:
            raise TokstudyError(
                f"{results}: no tokenizers (nothing under tokenizers/ or pretrained/)"
            )
        self.lock = threading.Lock()

    def page(self) -> str:
        """The playground: the viewer with a text box, no line yet."""
        languages = sorted({cell.language for cell in self.cells.values()})
        empty = {"lines": [], "notes": ["type text above and press Segment"]}
        return render(
            {
                "title": f"tokstudy serve: {self.results.name}",
                "live": True,
                "languages": languages,
                "colours": colours([cell.tokenizer for cell in self.cells.values()]),
                "samples": dict.fromkeys(languages, empty),
                "cells": [
                    {**vars(cell), "key": key, "directory": None, "frequencies": None}
                    | {"lines": [], "tokens": {}, "notes": []}
                    for key, cell in self.cells.items()
                ],
                "metrics": {"columns": [], "rows": []},
                "plots": [],
                "recommendation": {},
                "notes": [],
            }
        )

    def segment(self, body: bytes) -> dict[str, Any]:
        """Segment the request's text with the cells it names."""
        try:
            request = json.loads(body.decode("utf-8"))
            # a lone surrogate ("\\ud800") decodes but can be neither segmented nor answered
            json.dumps(request, ensure_ascii=False).encode("utf-8")
        except UnicodeDecodeError as exc:
            raise RequestError(HTTPStatus.BAD_REQUEST, f"body is not UTF-8 ({exc.reason})") from exc
        except UnicodeEncodeError as exc:
            raise RequestError(
                HTTPStatus.BAD_REQUEST, "body holds a lone surrogate (not a Unicode character)"
            ) from exc
        except json.JSONDecodeError as exc:
            raise RequestError(HTTPStatus.BAD_REQUEST, f"body is not JSON ({exc.msg})") from exc
        except RecursionError as exc:
            raise RequestError(HTTPStatus.BAD_REQUEST, "body is JSON nested too deep") from exc
        if not isinstance(request, dict) or not isinstance(request.get("text"), str):
            raise RequestError(HTTPStatus.BAD_REQUEST, 'expected {"text": "...", "cells": [...]}')
        keys = request.get("cells", list(self.cells))
        if not isinstance(keys, list) or not all(isinstance(key, str) for key in keys):
            raise RequestError(HTTPStatus.BAD_REQUEST, '"cells" must be a list of cell names')
        keys = list(dict.fromkeys(keys))  # each once: at most the study's cells
        unknown = [key for key in keys if key not in self.cells]
        if unknown:
            raise RequestError(
                HTTPStatus.NOT_FOUND, f"the study has no tokenizer {', '.join(unknown[:5])}"
            )
        if len(request["text"]) > MAX_TEXT:
            raise RequestError(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                f"text of {len(request['text'])} characters is over the limit of {MAX_TEXT}",
            )
        lines = [line for line in request["text"].splitlines() if line.strip()]
        sample = Sample()
        if len(lines) > MAX_LINES:
            sample.notes.append(f"{len(lines)} lines typed: the first {MAX_LINES} are shown")
            lines = lines[:MAX_LINES]
        sample.lines = [SampleLine(line, "typed", base_direction(line)) for line in lines]
        started, cells = time.monotonic(), []
        for key in keys:
            if cells and time.monotonic() - started > REQUEST_BUDGET_S:
                sample.notes.append(
                    f"{len(keys) - len(cells)} of {len(keys)} tokenizers left out: a request "
                    f"may take {REQUEST_BUDGET_S:g} s; ask for fewer"
                )
                break
            with self.lock:  # one cell at a time: other requests go between the cells
                cells.append(cell_json(self.cells[key], lines))
        return {"sample": sample_json(sample), "cells": cells}

    def study_file(self, relative: str) -> Path:
        """A file of the results folder; anything else is a 404."""
        name = unquote(relative)
        if "\x00" in name:
            raise RequestError(HTTPStatus.BAD_REQUEST, "a NUL byte in the path")
        path = (self.results / name).resolve()
        if not path.is_relative_to(self.results) or not path.is_file():
            raise RequestError(HTTPStatus.NOT_FOUND, f"no file {relative} in the results folder")
        return path


class Handler(BaseHTTPRequestHandler):
    """HTTP front of a :class:`Playground` (``server.playground``)."""

    server: PlaygroundServer
    #: the socket timeout of a connection (the standard library closes it when a request
    #: line or header does not arrive in time; a body that does not is a 408)
    timeout = IDLE_TIMEOUT_S

    def _send(self, status: HTTPStatus, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: HTTPStatus, data: Any) -> None:
        body = json.dumps(data, ensure_ascii=False).encode("utf-8")
        self._send(status, body, "application/json; charset=utf-8")

    def _error(self, error: RequestError) -> None:
        self._json(error.status, {"error": str(error)})

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Every error the standard library answers (a bad request line, an unsupported
        method, headers too long) as the JSON of the rest; an unsupported method is 405."""
        status = HTTPStatus(code)
        if status == HTTPStatus.NOT_IMPLEMENTED:
            status, message = HTTPStatus.METHOD_NOT_ALLOWED, f"method {self.command} not allowed"
        self.log_error("code %d, message %s", status, message)
        self.close_connection = True
        # a request line too broken to read leaves HTTP/0.9 (no headers): answer in full
        self.request_version = self.protocol_version
        body = json.dumps({"error": message or status.phrase}).encode("utf-8")
        self.send_response(status, message)
        if status == HTTPStatus.METHOD_NOT_ALLOWED:
            self.send_header("Allow", "GET, POST")
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _answer(self, respond: Callable[[], None]) -> None:
        """Run ``respond``; a bad request is its JSON 4xx, anything unforeseen a JSON 500
        (logged): the connection always gets an answer."""
        try:
            respond()
        except RequestError as error:
            self._error(error)
        except Exception as exc:  # never drop a connection without an answer
            self.log_error("internal error: %s", one_line(exc))
            self._error(RequestError(HTTPStatus.INTERNAL_SERVER_ERROR, one_line(exc)))

    def do_GET(self) -> None:
        self._answer(self._get)

    def do_POST(self) -> None:
        self._answer(self._post)

    def _get(self) -> None:
        path = urlsplit(self.path).path
        playground = self.server.playground
        if path == "/":
            self._send(HTTPStatus.OK, playground.page().encode("utf-8"), "text/html; charset=utf-8")
        elif path.startswith("/study/"):
            file = playground.study_file(path.removeprefix("/study/"))
            kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
            self._send(HTTPStatus.OK, file.read_bytes(), kind)
        else:
            raise RequestError(HTTPStatus.NOT_FOUND, f"no page {path}")

    def _post(self) -> None:
        if urlsplit(self.path).path != "/api/segment":
            raise RequestError(HTTPStatus.NOT_FOUND, f"no endpoint {self.path}")
        self._json(HTTPStatus.OK, self.server.playground.segment(self._body()))

    def _body(self) -> bytes:
        """The request body: a missing Content-Length is 411, one that is no count of
        bytes 400, one over :data:`MAX_BODY` 413 (the body is never read then)."""
        given = self.headers.get("Content-Length")
        if given is None:
            self.close_connection = True
            raise RequestError(HTTPStatus.LENGTH_REQUIRED, "Content-Length required")
        if not given.strip().isdigit():
            self.close_connection = True
            raise RequestError(
                HTTPStatus.BAD_REQUEST, f"Content-Length {given[:40]!r} is not a count of bytes"
            )
        length = int(given)
        if length > MAX_BODY:
            self.close_connection = True
            raise RequestError(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                f"body of {length} bytes is over the limit of {MAX_BODY}",
            )
        try:
            return self.rfile.read(length)
        except TimeoutError:
            self.close_connection = True
            raise RequestError(
                HTTPStatus.REQUEST_TIMEOUT, f"body not received within {self.timeout:g} s"
            ) from None

    def log_message(self, format: str, *args: Any) -> None:
        sys.stderr.write(f"tokstudy serve: {self.address_string()} {format % args}\n")


class PlaygroundServer(ThreadingHTTPServer):
    """A threading HTTP server holding the playground."""

    daemon_threads = True
    #: pending connections the kernel holds (``listen`` backlog; the standard library's 5
    #: reset some of 50 clients connecting at once)
    request_queue_size = 1024

    def __init__(self, address: tuple[str, int], playground: Playground) -> None:
        super().__init__(address, Handler)
        self.playground = playground


def serve(results: Path, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve the playground until Ctrl-C; prints its address first. A port out of range,
    one in use or a host that cannot be bound is one line."""
    if not 0 <= port <= 65535:
        raise TokstudyError(f"--port {port}: a port is 0 to 65535")
    playground = Playground(results)
    try:
        server = PlaygroundServer((host, port), playground)
    except (OSError, OverflowError, UnicodeError) as exc:
        reason = getattr(exc, "strerror", None) or one_line(exc)
        raise TokstudyError(
            f"--host {host} --port {port}: cannot listen there ({reason})"
        ) from None
    print(f"tokstudy serve: http://{host}:{server.server_address[1]}/ (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("tokstudy serve: stopped", flush=True)
    finally:
        server.server_close()
