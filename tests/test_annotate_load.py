"""The rating server as a real process on 127.0.0.1 (``tsteval annotate serve``): 50 concurrent annotator clients
lose no rating and see no error, and a server killed with SIGKILL mid-study keeps every rating it acknowledged.
Bounded: a few seconds of load each; every process is stopped at the end."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from benchmarks.speed.annotate_speed import QUESTIONS, free_port, load_study, run_clients, server, stored
from tsteval.annotate.study import Study


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str], dict[str, str]]:
    folder, tokens = load_study(tmp_path_factory.mktemp("load"), inputs=60, annotators=50)
    store = Study.open(folder).store()
    names = {t: store.annotator(t).name for t in tokens}
    store.close()
    return folder, tokens, names


def _check_acknowledged(folder: Path, load: object, names: dict[str, str]) -> dict:
    rows, history = stored(folder)
    for token, pair, ratings in load.acked:
        for question, value in ratings.items():
            assert rows[(names[token], pair, question)] == value
    return {"rows": len(rows), "history": history}


def test_fifty_clients_lose_nothing(study: tuple) -> None:
    folder, tokens, names = study
    port = free_port()
    with server(folder, port):
        load = run_clients(port, tokens, seconds=3.0)
    assert load.errors == []
    assert len({t for t, _, _ in load.acked}) == 50  # every client got through
    counts = _check_acknowledged(folder, load, names)
    assert counts["rows"] == counts["history"] == len(load.acked) * len(QUESTIONS)


def test_a_killed_server_keeps_every_acknowledged_rating(study: tuple) -> None:
    folder, tokens, names = study
    before, history = stored(folder)
    port = free_port()
    with server(folder, port) as process:
        result = {}
        clients = threading.Thread(target=lambda: result.update(load=run_clients(port, tokens[:25], seconds=30.0)))
        clients.start()
        deadline = time.monotonic() + 60
        while stored(folder)[1] < history + 300 and time.monotonic() < deadline:  # let ratings come in
            time.sleep(0.2)
        process.kill()  # SIGKILL, mid-study: requests are in flight
        clients.join(timeout=60)
        assert not clients.is_alive()
    load = result["load"]
    assert load.acked and load.errors  # some answered before the kill, the rest refused by a dead server
    counts = _check_acknowledged(folder, load, names)
    assert counts["rows"] >= len(before) + len(load.acked) * len(QUESTIONS)
    port = free_port()
    with server(folder, port):  # restarted: the database opens, and the study goes on where it stopped
        after = run_clients(port, tokens[:5], seconds=0.5)
    assert after.errors == [] and after.acked
    _check_acknowledged(folder, after, names)
