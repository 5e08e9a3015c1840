"""The rating server of ``tsteval annotate serve``: a Starlette application run by uvicorn, reading the study's
sample and writing only its ratings database.

Rules, each tested (``tests/test_annotate_server.py``):

* every page and endpoint needs an annotator's token (in the private link, ``/a/TOKEN``); without a valid one the
  answer is 404, the same as for a page that does not exist;
* an annotator reads and rates only the pairs assigned to them; a rating off the scale (``null`` is "can't judge"
  where the template offers it), of an unknown question or pair, or a body over :data:`MAX_BODY` bytes is refused
  (422, 403, 413) and nothing is written;
* state changes are POSTs of JSON carrying the page's anti-forgery token (an HMAC of the annotator's token under the
  study's secret) in ``X-CSRF-Token``, and a foreign ``Origin`` is refused: another site can neither read the token
  nor send the request;
* every text is escaped by the page template (Jinja2 autoescaping), and the Content-Security-Policy runs only the
  page's own script (a nonce), so a system output holding ``<script>`` is shown as text;
* one submission is one SQLite transaction (:meth:`tsteval.annotate.store.Store.submit`), acknowledged after its
  commit;
* the open link of a Prolific study (``/p/KEY?PROLIFIC_PID=...&STUDY_ID=...&SESSION_ID=...``, printed by
  ``tsteval annotate invite --prolific CODE``; KEY is an HMAC under the study's secret, a wrong one is 404) makes
  each participant an annotator on their first visit (:meth:`tsteval.annotate.store.Store.participant`) and
  redirects them to their own page (the same participant, the same page); a missing or malformed
  ``PROLIFIC_PID`` is refused (400).  Their last page gives the Prolific study's completion code and the link
  back to Prolific that completes their submission.
"""

from __future__ import annotations

import hmac
import json
import re
import secrets
from pathlib import Path
from urllib.parse import quote as url_quote

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from tsteval.annotate.store import PROLIFIC, Annotator, token_hash
from tsteval.annotate.study import Study
from tsteval.core.errors import InputError

MAX_BODY = 16 * 1024
PAGE = Path(__file__).with_name("assets") / "page.html"
PROLIFIC_COMPLETE = "https://app.prolific.com/submissions/complete?cc="
PROLIFIC_ID = re.compile(r"[A-Za-z0-9]{1,64}")  # Prolific's ids are 24 hexadecimal digits
NOT_FOUND = "Not found: open the private link you were given."
HEADERS = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff",
           "X-Frame-Options": "DENY"}


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=HEADERS)


class RatingApp:
    """The state the endpoints share: the study, its database and the page template."""

    def __init__(self, study: Study) -> None:
        import jinja2

        self.study = study
        self.store = study.store()
        self.secret = self.store.secret.encode("ascii")
        self.pairs = {row["pair_id"]: {**row, "input": study.display(row["input"]),
                                       "output": study.display(row["output"])}
                      for row in study.pairs.to_dict("records")}  # the texts as shown (Study.display)
        env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
        self.page = env.from_string(PAGE.read_text(encoding="utf-8"))
        low, high = study.template.scale
        self.points = list(range(low, high + 1))
        self.complete = len(study.template.names)
        # The server is the only writer of its annotators' ratings, so each annotator's order and answers are read
        # from the database once and then kept up to date here (a page costs no query; a submission one commit).
        self.annotators: dict[str, Annotator | None] = {}
        self.orders: dict[int, tuple[list[str], frozenset[str]]] = {}
        self.answers: dict[int, dict[str, dict[str, float | None]]] = {}

    def csrf(self, token: str) -> str:
        """The anti-forgery token of the page served to the holder of ``token``."""
        return hmac.new(self.secret, token_hash(token).encode("ascii"), "sha256").hexdigest()

    def who(self, request: Request) -> tuple[Annotator | None, str]:
        token = request.path_params["token"]
        if not 16 <= len(token) <= 64:
            return None, token
        who = self.annotators.get(token)
        if who is None:
            who = self.store.annotator(token)
            if who is not None:  # an unknown token is looked up again next time (invite may add it meanwhile)
                self.annotators[token] = who
                order = self.store.assignment(who)
                self.orders[who.id] = (order, frozenset(order))
                self.answers[who.id] = self.store.answered(who)
        return who, token

    async def page_view(self, request: Request) -> Response:
        who, token = self.who(request)
        if who is None:
            return PlainTextResponse(NOT_FOUND, 404, headers=HEADERS)
        order, _ = self.orders[who.id]
        answers = self.answers[who.id]
        complete = self.complete
        done = sum(len(a) >= complete for a in answers.values())
        at = request.query_params.get("at")
        if at is not None:
            if not at.isdigit() or int(at) >= len(order):
                return PlainTextResponse(f"No pair {at[:20]!r}: positions run from 0 to {len(order) - 1}.", 404,
                                         headers=HEADERS)
            position = int(at)
        else:
            position = next((i for i, p in enumerate(order) if len(answers.get(p, {})) < complete), None)
        pair = None if position is None else self.pairs[order[position]]
        nonce = secrets.token_urlsafe(16)
        low, high = self.study.template.scale
        html = self.page.render(
            title=self.study.template.title, instructions=self.study.template.instructions, total=len(order),
            done=done, pair=pair, position=position, code=who.code, questions=self.study.template.questions,
            points=self.points, answers={} if pair is None else answers.get(pair["pair_id"], {}), low=low, high=high,
            cant_judge=self.study.template.cant_judge,
            csrf=self.csrf(token), post=f"/a/{token}/rate", next=f"/a/{token}", nonce=nonce,
            complete=PROLIFIC_COMPLETE + url_quote(who.code) if who.name.startswith(PROLIFIC) else None)
        policy = (f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; connect-src 'self'; "
                  "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
        return HTMLResponse(html, headers={**HEADERS, "Content-Security-Policy": policy})

    async def open_link(self, request: Request) -> Response:
        """A Prolific participant's entry: their annotator (made on the first visit), then their page."""
        code = self.store.completion_code()
        if code is None or not hmac.compare_digest(request.path_params["key"], self.store.derived("open")):
            return PlainTextResponse(NOT_FOUND, 404, headers=HEADERS)
        query = request.query_params
        pid, ids = query.get("PROLIFIC_PID", ""), [query.get("STUDY_ID", ""), query.get("SESSION_ID", "")]
        if not PROLIFIC_ID.fullmatch(pid) or not all(PROLIFIC_ID.fullmatch(v) for v in ids if v):
            return PlainTextResponse("Open this study from Prolific: the link needs your PROLIFIC_PID (and the "
                                     "STUDY_ID and SESSION_ID Prolific adds).", 400, headers=HEADERS)
        _, token = self.store.participant(pid, self.study.invited_pair_ids, seed=int(self.study.info["seed"]),
                                          study_id=ids[0], session_id=ids[1])
        return RedirectResponse(f"/a/{token}", 303, headers=HEADERS)

    async def rate(self, request: Request) -> Response:
        who, token = self.who(request)
        if who is None:
            return _error(404, "unknown link")
        origin = request.headers.get("origin")
        if origin is not None and origin != f"{request.url.scheme}://{request.headers.get('host', '')}":
            return _error(403, "cross-site request refused")
        if not hmac.compare_digest(request.headers.get("x-csrf-token", ""), self.csrf(token)):
            return _error(403, "missing or wrong anti-forgery token: reload the page")
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return _error(415, "send JSON")
        body = await _read_limited(request)
        if body is None:
            return _error(413, f"body over {MAX_BODY} bytes")
        try:
            data = json.loads(body)
            pair, ratings = data["pair_id"], data["ratings"]
            if not isinstance(pair, str) or not isinstance(ratings, dict) or not ratings:
                raise TypeError
        except (ValueError, KeyError, TypeError):
            return _error(422, 'expected {"pair_id": ID, "ratings": {QUESTION: VALUE, ...}}')
        if pair not in self.orders[who.id][1]:
            return _error(403, "not one of your pairs")
        try:
            for question, value in ratings.items():
                self.study.check(question, pair, value)
        except InputError as error:
            return _error(422, str(error))
        self.store.submit(who, pair, ratings, "web")
        self.answers[who.id].setdefault(pair, {}).update({q: None if v is None else float(v)
                                                          for q, v in ratings.items()})
        return JSONResponse({"saved": pair}, headers=HEADERS)


async def _read_limited(request: Request) -> bytes | None:
    """The request body, or None when it is (or declares itself) over :data:`MAX_BODY` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY):
        return None
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            return None
    return body


async def _not_found(request: Request) -> Response:
    return PlainTextResponse(NOT_FOUND, 404, headers=HEADERS)


def make_app(study: Study) -> Starlette:
    """The ASGI application serving ``study``."""
    state = RatingApp(study)
    routes = [Route("/a/{token}", state.page_view, methods=["GET"]),
              Route("/a/{token}/rate", state.rate, methods=["POST"]),
              Route("/p/{key}", state.open_link, methods=["GET"]),
              Route("/", _not_found)]
    app = Starlette(routes=routes)
    app.state.rating = state
    return app


def serve(study: Study, host: str = "127.0.0.1", port: int = 8765, log: bool = True) -> None:
    """Serve ``study`` until interrupted."""
    import uvicorn

    uvicorn.run(make_app(study), host=host, port=port, log_level="info" if log else "warning",
                access_log=False, server_header=False)
