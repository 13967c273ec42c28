"""``tokstudy serve RESULTS_DIR``: the study's tokenizers segment any typed text, side by
side, in the study page's viewer (standard library ``ThreadingHTTPServer``).

``GET /`` is the playground; ``POST /api/segment`` takes ``{"text": …, "cells": [keys]}``
(UTF-8 JSON, at most :data:`MAX_BODY` bytes) and answers the segmentations; ``GET
/study/<path>`` serves a file of the results folder (the study page and its plots). No file
outside the results folder is read; a bad request gets one 4xx line and the server stays up.
"""

from __future__ import annotations

import json
import mimetypes
import sys
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from tokstudy.cells import PRETRAINED
from tokstudy.errors import TokstudyError
from tokstudy.report.page.build import PageCell, cell_json, colours, render, sample_json
from tokstudy.report.page.segments import Sample, SampleLine, base_direction
from tokstudy.tokenizers.registry import META_FILE

#: largest request body accepted (413 above)
MAX_BODY = 64 * 1024
#: most lines of typed text segmented at once
MAX_LINES = 50
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
    return [cell for cell in cells if Path(cell.directory).resolve().is_relative_to(results)]


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
        except UnicodeDecodeError as exc:
            raise RequestError(HTTPStatus.BAD_REQUEST, f"body is not UTF-8 ({exc.reason})") from exc
        except json.JSONDecodeError as exc:
            raise RequestError(HTTPStatus.BAD_REQUEST, f"body is not JSON ({exc.msg})") from exc
        if not isinstance(request, dict) or not isinstance(request.get("text"), str):
            raise RequestError(HTTPStatus.BAD_REQUEST, 'expected {"text": "...", "cells": [...]}')
        keys = request.get("cells", list(self.cells))
        if not isinstance(keys, list) or not all(isinstance(key, str) for key in keys):
            raise RequestError(HTTPStatus.BAD_REQUEST, '"cells" must be a list of cell names')
        unknown = [key for key in keys if key not in self.cells]
        if unknown:
            raise RequestError(
                HTTPStatus.NOT_FOUND, f"the study has no tokenizer {', '.join(unknown)}"
            )
        lines = [line for line in request["text"].splitlines() if line.strip()]
        sample = Sample()
        if len(lines) > MAX_LINES:
            sample.notes.append(f"{len(lines)} lines typed: the first {MAX_LINES} are shown")
            lines = lines[:MAX_LINES]
        sample.lines = [SampleLine(line, "typed", base_direction(line)) for line in lines]
        with self.lock:
            cells = [cell_json(self.cells[key], lines) for key in keys]
        return {"sample": sample_json(sample), "cells": cells}

    def study_file(self, relative: str) -> Path:
        """A file of the results folder; anything else is a 404."""
        path = (self.results / unquote(relative)).resolve()
        if not path.is_relative_to(self.results) or not path.is_file():
            raise RequestError(HTTPStatus.NOT_FOUND, f"no file {relative} in the results folder")
        return path


class Handler(BaseHTTPRequestHandler):
    """HTTP front of a :class:`Playground` (``server.playground``)."""

    server: PlaygroundServer

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

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        playground = self.server.playground
        try:
            if path == "/":
                self._send(
                    HTTPStatus.OK, playground.page().encode("utf-8"), "text/html; charset=utf-8"
                )
            elif path.startswith("/study/"):
                file = playground.study_file(path.removeprefix("/study/"))
                kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
                self._send(HTTPStatus.OK, file.read_bytes(), kind)
            else:
                raise RequestError(HTTPStatus.NOT_FOUND, f"no page {path}")
        except RequestError as error:
            self._error(error)

    def do_POST(self) -> None:
        try:
            if urlsplit(self.path).path != "/api/segment":
                raise RequestError(HTTPStatus.NOT_FOUND, f"no endpoint {self.path}")
            try:
                length = int(self.headers.get("Content-Length", ""))
            except ValueError as exc:
                raise RequestError(HTTPStatus.LENGTH_REQUIRED, "Content-Length required") from exc
            if length > MAX_BODY:
                self.close_connection = True
                raise RequestError(
                    HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                    f"body of {length} bytes is over the limit of {MAX_BODY}",
                )
            self._json(HTTPStatus.OK, self.server.playground.segment(self.rfile.read(length)))
        except RequestError as error:
            self._error(error)

    def log_message(self, format: str, *args: Any) -> None:
        sys.stderr.write(f"tokstudy serve: {self.address_string()} {format % args}\n")


class PlaygroundServer(ThreadingHTTPServer):
    """A threading HTTP server holding the playground."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], playground: Playground) -> None:
        super().__init__(address, Handler)
        self.playground = playground


def serve(results: Path, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve the playground until Ctrl-C; prints its address first."""
    server = PlaygroundServer((host, port), Playground(results))
    print(f"tokstudy serve: http://{host}:{server.server_address[1]}/ (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("tokstudy serve: stopped", flush=True)
    finally:
        server.server_close()
