"""The rating server's rules (:mod:`tsteval.annotate.server`), through Starlette's test client: tokens, another
annotator's pairs, the scale, body size, cross-site forgery, escaping, one transaction per submission, resume."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from annotate_study import HOSTILE, make_study
from starlette.testclient import TestClient

from tsteval.annotate.server import MAX_BODY, make_app


@pytest.fixture()
def served(tmp_path: Path) -> tuple[object, TestClient, list[tuple[object, str]]]:
    study = make_study(tmp_path, items=4)
    store = study.store()
    invited = store.add_annotators(study.pair_ids, seed=0, count=2)
    store.close()
    with TestClient(make_app(study), base_url="http://127.0.0.1:8765") as client:
        yield study, client, invited


def _form(client: TestClient, token: str, query: str = "") -> dict[str, str]:
    page = client.get(f"/a/{token}{query}")
    assert page.status_code == 200
    fields = dict(re.findall(r'data-(pair|csrf|post)="([^"]*)"', page.text))
    return {"pair": fields.get("pair", ""), "csrf": fields.get("csrf", ""), "post": fields.get("post", ""),
            "html": page.text}


def _rate(client: TestClient, form: dict[str, str], ratings: dict, **headers: str) -> object:
    head = {"X-CSRF-Token": form["csrf"], **headers}
    return client.post(form["post"], json={"pair_id": form["pair"], "ratings": ratings}, headers=head)


def _count(study: object) -> tuple[int, int]:
    store = study.store()
    try:
        return len(store.ratings()), store.history_count()
    finally:
        store.close()


def test_a_rating_is_saved_and_the_next_page_follows(served: tuple) -> None:
    study, client, ((who, token), _) = served
    first = _form(client, token)
    assert _rate(client, first, {"style": 4, "content": 5, "fluency": 3}).status_code == 200
    second = _form(client, token)
    assert second["pair"] != first["pair"] and "1 of 14 done" in second["html"]
    assert _count(study) == (3, 3)


def test_without_a_valid_token_every_page_refuses(served: tuple) -> None:
    study, client, ((_, token), _) = served
    form = _form(client, token)
    assert client.get("/").status_code == 404
    assert client.get("/a/" + "x" * 32).status_code == 404
    assert client.get("/a/short").status_code == 404
    forged = dict(form, post=form["post"].replace(token, token[:-1] + ("A" if token[-1] != "A" else "B")))
    assert _rate(client, forged, {"style": 3}).status_code == 404
    assert _count(study) == (0, 0)


def test_another_annotators_pairs_and_ratings_are_out_of_reach(served: tuple) -> None:
    study, client, ((who_a, token_a), (who_b, token_b)) = served
    b_form = _form(client, token_b)
    assert _rate(client, b_form, {"style": 1, "content": 1, "fluency": 1}).status_code == 200
    store = study.store()
    store.db.execute("DELETE FROM assignments WHERE annotator = ? AND pair_id = ?", (who_a.id, b_form["pair"]))
    store.close()
    a_form = _form(client, token_a)
    for pair in (b_form["pair"], "p9999", "r:p9999"):  # b's only, nobody's
        assert _rate(client, dict(a_form, pair=pair), {"style": 5}).status_code == 403
    assert _rate(client, a_form, {"style": 5, "content": 5, "fluency": 5}).status_code == 200
    store = study.store()
    ratings = store.ratings()
    store.close()
    assert ratings[ratings["annotator"] == "a2"]["value"].tolist() == [1.0, 1.0, 1.0]
    assert b_form["pair"] not in set(ratings.loc[ratings["annotator"] == "a1", "pair_id"])


def test_off_scale_unknown_questions_and_bad_json_are_refused(served: tuple) -> None:
    study, client, ((_, token), _) = served
    form = _form(client, token)
    for ratings in ({"style": 6}, {"style": 0}, {"style": 2.5}, {"style": "3"}, {"style": True}, {"colour": 3}, {}):
        response = _rate(client, form, ratings)
        assert response.status_code == 422, ratings
    response = client.post(form["post"], content=b"{not json", headers={"X-CSRF-Token": form["csrf"],
                                                                        "Content-Type": "application/json"})
    assert response.status_code == 422
    assert _count(study) == (0, 0)


def test_an_oversized_body_is_refused(served: tuple) -> None:
    study, client, ((_, token), _) = served
    form = _form(client, token)
    response = _rate(client, form, {"style": 3, "x" * (MAX_BODY + 10): 1})
    assert response.status_code == 413
    assert _count(study) == (0, 0)


def test_cross_site_requests_are_refused(served: tuple) -> None:
    study, client, ((_, token), (_, other)) = served
    form = _form(client, token)
    assert _rate(client, dict(form, csrf=""), {"style": 3}).status_code == 403
    assert _rate(client, dict(form, csrf=_form(client, other)["csrf"]), {"style": 3}).status_code == 403
    assert _rate(client, form, {"style": 3}, Origin="https://evil.example").status_code == 403
    as_form = client.post(form["post"], data={"pair_id": form["pair"]}, headers={"X-CSRF-Token": form["csrf"]})
    assert as_form.status_code == 415  # a plain HTML form from another site cannot send JSON
    assert _count(study) == (0, 0)
    assert _rate(client, form, {"style": 3}, Origin="http://127.0.0.1:8765").status_code == 200


def test_system_outputs_are_escaped_and_scripts_limited_by_policy(served: tuple) -> None:
    study, client, ((_, token), _) = served
    store = study.store()
    order = store.assignment(store.annotator(token))
    store.close()
    hostile = [i for i, p in enumerate(order) if study.pairs.set_index("pair_id").loc[p, "output"].startswith("<")]
    page = client.get(f"/a/{token}?at={hostile[0]}")
    assert "<script>window.pwned" not in page.text and "<img src=x" not in page.text
    assert "&lt;script&gt;window.pwned = 1&lt;/script&gt;" in page.text
    assert HOSTILE not in page.text
    policy = page.headers["content-security-policy"]
    assert "script-src 'nonce-" in policy and "unsafe-inline" not in policy
    assert page.headers["referrer-policy"] == "no-referrer" and page.headers["x-frame-options"] == "DENY"


def test_rerating_keeps_one_current_row_and_the_history(served: tuple) -> None:
    study, client, ((_, token), _) = served
    form = _form(client, token)
    _rate(client, form, {"style": 2, "content": 2, "fluency": 2})
    again = _form(client, token, "?at=0")
    assert again["pair"] == form["pair"] and 'value="2" checked' in again["html"]
    _rate(client, again, {"style": 5})
    store = study.store()
    ratings = store.ratings()
    store.close()
    assert len(ratings) == 3 and ratings.set_index("question").loc["style", "value"] == 5
    assert _count(study) == (3, 4)


def test_the_last_page_gives_the_completion_code(served: tuple) -> None:
    study, client, ((who, token), _) = served
    for _ in range(len(study.pair_ids)):
        assert _rate(client, _form(client, token), {"style": 3, "content": 4, "fluency": 5}).status_code == 200
    done = client.get(f"/a/{token}")
    assert who.code in done.text and "every pair is rated" in done.text
    assert client.get(f"/a/{token}?at=999").status_code == 404


def test_serve_listens_where_the_invited_links_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture) -> None:
    """``invite --base-url`` records the links' address; ``serve`` without --port listens on its port, warns when
    told another, and a later ``invite`` prints links on the same address (issue 59, Messages)."""
    from tsteval.cli.main import main

    make_study(tmp_path, items=4)
    ports: list[int] = []
    monkeypatch.setattr("tsteval.annotate.server.serve", lambda study, host, port, **k: ports.append(port))
    study = str(tmp_path / "study")
    assert main(["annotate", "invite", study, "--annotators", "1", "--base-url", "http://127.0.0.1:9123"]) == 0
    assert main(["annotate", "serve", study]) == 0
    assert ports == [9123] and "warning" not in capsys.readouterr().err
    assert main(["annotate", "serve", study, "--port", "8000"]) == 0
    assert ports[-1] == 8000 and "links point to http://127.0.0.1:9123" in capsys.readouterr().err
    assert main(["annotate", "invite", study, "--annotators", "1"]) == 0
    assert "\thttp://127.0.0.1:9123/a/" in capsys.readouterr().out
    assert main(["annotate", "invite", study, "--annotators", "1", "--base-url", "http://host:port"]) == 2
    make_study(tmp_path / "fresh", items=4)
    assert main(["annotate", "serve", str(tmp_path / "fresh" / "study")]) == 0
    assert ports[-1] == 8765


def test_cant_judge_is_stored_as_no_rating_and_refused_where_not_offered(served: tuple, tmp_path: Path) -> None:
    """The default template offers "can't judge" (null): the page shows it, the database keeps the answer without a
    value, the pair counts as answered, and agreement counts it as not rated; a template without ``cant_judge``
    refuses null (issue 59 item 7)."""
    from tsteval.annotate.reliability import agreement
    from tsteval.annotate.template import DEFAULT

    study, client, ((who, token), _) = served
    form = _form(client, token)
    assert "can&#39;t judge (x)" in form["html"]
    assert _rate(client, form, {"style": None, "content": 4, "fluency": 5}).status_code == 200
    again = _form(client, token, "?at=0")
    assert re.search(r'name="style" value="" checked', again["html"])
    store = study.store()
    ratings = store.ratings()
    assert store.progress(3).set_index("annotator").loc[who.name, "done"] == 1
    store.close()
    assert ratings["value"].isna().sum() == 1 and len(ratings) == 3
    result = agreement(study, n_resamples=5)
    assert result.info["cant_judge"] == {"style": 1} and result.info["ratings"] == 2
    assert 'style: 1 answers "can\'t judge", counted as not rated' in result.markdown()
    plain = tmp_path / "plain.yaml"
    plain.write_text(DEFAULT.read_text(encoding="utf-8").replace('cant_judge: "can\'t judge"', ""), encoding="utf-8")
    other = make_study(tmp_path / "other", items=4, template=plain)
    store = other.store()
    ((_, token2),) = store.add_annotators(other.pair_ids, seed=0, count=1)
    store.close()
    with TestClient(make_app(other), base_url="http://127.0.0.1:8765") as plain_client:
        form = _form(plain_client, token2)
        assert "judge (x)" not in form["html"]
        response = _rate(plain_client, form, {"style": None})
        assert response.status_code == 422 and "offers no" in response.json()["error"]
