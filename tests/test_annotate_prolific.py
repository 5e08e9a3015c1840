"""A Prolific study's open link (``tsteval annotate invite --prolific CODE``, served by ``annotate serve``): the
URL Prolific opens with ``PROLIFIC_PID``, ``STUDY_ID`` and ``SESSION_ID`` (as Prolific's "URL parameters" option
adds them) makes each participant an annotator once, and their last page gives the completion code and the link
back to Prolific."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from annotate_study import make_study
from badinput import expect_error, run_cli
from starlette.testclient import TestClient

from tsteval.annotate.server import make_app
from tsteval.annotate.study import Study

CODE = "C1A2B3C4"
PID, OTHER = "5f0a1b2c3d4e5f6a7b8c9d0e", "60aa1b2c3d4e5f6a7b8c9d0f"


@pytest.fixture()
def link(tmp_path: Path, capsys: pytest.CaptureFixture) -> tuple[Study, str]:
    make_study(tmp_path, items=2, questions=["content"])
    outcome = run_cli(["annotate", "invite", tmp_path / "study", "--prolific", CODE], capsys)
    assert outcome.code == 0, outcome.err
    url = outcome.out.strip()
    assert url.endswith("?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}")
    return Study.open(tmp_path / "study"), urlsplit(url).path


def _enter(client: TestClient, path: str, pid: str, session: str = "S1") -> object:
    return client.get(path, params={"PROLIFIC_PID": pid, "STUDY_ID": "ST1", "SESSION_ID": session},
                      follow_redirects=False)


def test_each_participant_gets_their_own_pages_and_the_completion_code(link: tuple[Study, str]) -> None:
    study, path = link
    with TestClient(make_app(study), base_url="http://127.0.0.1:8765") as client:
        first = _enter(client, path, PID)
        assert first.status_code == 303 and first.headers["location"].startswith("/a/")
        assert _enter(client, path, PID, "S2").headers["location"] == first.headers["location"]
        assert _enter(client, path, OTHER).headers["location"] != first.headers["location"]
        page = client.get(first.headers["location"])
        for _ in range(len(study.invited_pair_ids)):
            form = dict(re.findall(r'data-(pair|csrf|post)="([^"]*)"', page.text))
            saved = client.post(form["post"], json={"pair_id": form["pair"], "ratings": {"content": 4}},
                                headers={"X-CSRF-Token": form["csrf"]})
            assert saved.status_code == 200
            page = client.get(first.headers["location"])
        assert f'<strong id="code">{CODE}</strong>' in page.text
        assert f'href="https://app.prolific.com/submissions/complete?cc={CODE}"' in page.text
    with sqlite3.connect(study.path / "ratings.sqlite") as db:
        names = db.execute("SELECT name, source FROM annotators ORDER BY id").fetchall()
        sessions = db.execute("SELECT study_id, session_id FROM sessions ORDER BY at").fetchall()
        rated = db.execute("SELECT COUNT(*) FROM ratings").fetchone()[0]
    assert names == [(f"PROLIFIC_PID:{PID}", "prolific"), (f"PROLIFIC_PID:{OTHER}", "prolific")]
    assert sessions == [("ST1", "S1"), ("ST1", "S2"), ("ST1", "S1")] and rated == len(study.invited_pair_ids)


def test_the_open_link_refuses_a_wrong_key_and_a_missing_participant(link: tuple[Study, str]) -> None:
    study, path = link
    with TestClient(make_app(study), base_url="http://127.0.0.1:8765") as client:
        assert _enter(client, "/p/" + "0" * 32, PID).status_code == 404
        assert client.get(path).status_code == 400
        assert _enter(client, path, "{{%PROLIFIC_PID%}}").status_code == 400
        assert _enter(client, path, PID, "x' OR 1=1").status_code == 400


def test_without_invite_prolific_there_is_no_open_link(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    study = make_study(tmp_path, items=2, questions=["content"])
    store = study.store()
    key = store.derived("open")
    store.close()
    with TestClient(make_app(study), base_url="http://127.0.0.1:8765") as client:
        assert _enter(client, f"/p/{key}", PID).status_code == 404
    expect_error(["annotate", "invite", tmp_path / "study"], capsys, "--annotators", "--prolific")
    expect_error(["annotate", "invite", tmp_path / "study", "--prolific", "no code!"], capsys, "letters and digits")


def test_the_open_link_records_its_address_for_serve_and_later_links(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture) -> None:
    """invite --prolific records the address its URL points to, as invite --annotators does: later links use it."""
    study = make_study(tmp_path, items=2, questions=["content"])
    outcome = run_cli(["annotate", "invite", tmp_path / "study", "--prolific", CODE, "--base-url",
                       "http://127.0.0.1:9100"], capsys)
    assert outcome.code == 0 and outcome.out.startswith("http://127.0.0.1:9100/p/"), outcome.err
    store = study.store()
    assert store.base_url == "http://127.0.0.1:9100"
    store.close()
    later = run_cli(["annotate", "invite", tmp_path / "study", "--annotators", "1"], capsys)
    assert later.code == 0 and "\thttp://127.0.0.1:9100/a/" in later.out, later.err
