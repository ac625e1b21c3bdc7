"""``judgelab annotate``: the pairs file and scale, the journal and its replay into the qrels, the
request handler's refusals (a real server on a free port, no browser), the annotators'
agreement. The page in a real browser: tests/test_annotate_browser.py."""

from __future__ import annotations

import http.client
import json
import logging
import threading
from pathlib import Path

import pandas as pd
import pytest
from conftest import FIXTURES

from judgelab.annotate.journal import Refused, Session
from judgelab.annotate.pairs import Scale, read_pairs, scale_of, text_digest
from judgelab.annotate.server import AnnotationServer, check_host
from judgelab.errors import InputError

PAIRS = FIXTURES / "annotate_pairs.tsv"
GRADED = Scale((0, 1, 2, 3), ("no", "related", "highly", "perfectly"), "test")


def session(folder: Path, annotator: str = "ana") -> Session:
    return Session(read_pairs(PAIRS), GRADED, folder, annotator)


# -- the pairs file and the scale ----------------------------------------------------------------


def test_a_pairs_file_and_a_dataset_table_are_read_alike(tmp_path):
    pairs = read_pairs(PAIRS)
    assert [p.key for p in pairs[:2]] == [("1001", "d1"), ("1001", "d2")] and len(pairs) == 12
    assert pairs[0].line == 2
    assert pairs[0].digest == text_digest(pairs[0].query, pairs[0].passage)
    table = pd.read_csv(PAIRS, sep="\t", dtype=str).assign(dataset="bees", grade=1)
    table = table[["dataset", "qid", "query", "docid", "passage", "grade"]]
    table.to_csv(tmp_path / "dataset.tsv", sep="\t", index=False)
    assert read_pairs(tmp_path / "dataset.tsv") == pairs


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ("qid\tdocid\tquery\n1\td\tq\n", "missing ['passage']"),
        (
            "qid\tdocid\tquery\tpassage\n1\td\tq\tp\n1\td\tq\tp2\n",
            ":3: pair 1 d is listed twice (first on line 2)",
        ),
        ("qid\tdocid\tquery\tpassage\n1\td\tq\tp\n1\te\tq\t\n", ":3: the passage of 1 e is empty"),
        ("qid\tdocid\tquery\tpassage\n1\td x\tq\tp\n", ":2: docid 'd x' is empty or holds white space"),
        ("qid\tdocid\tquery\tpassage\n", "lists no pair"),
        ("", "not a tab-separated table with a header"),
    ],
)
def test_a_bad_pairs_file_is_one_error_naming_its_line(tmp_path, rows, message):
    path = tmp_path / "pairs.tsv"
    path.write_text(rows, encoding="utf-8")
    with pytest.raises(InputError, match=str(path)) as err:
        read_pairs(path)
    assert message in str(err.value)


def test_the_scale_and_its_definitions_come_from_the_template():
    umbrela = scale_of()
    assert umbrela.labels == (0, 1, 2, 3)
    assert umbrela.definitions[0].startswith("Non-relevant: represent that the passage has nothing")
    assert umbrela.definitions[3].startswith("Perfectly relevant: represents that the passage is dedicated")
    peras = scale_of("peras/wo_cot")
    assert peras.definitions[0] == "Irrelevant: The passage has no connection to the query."
    assert scale_of("overrating/binary").labels == (0, 1)


def test_a_template_that_defines_no_label_is_refused(tmp_path):
    path = tmp_path / "bare.yaml"
    path.write_text('kind: judgment\ntemplate: "Query: {query} Passage: {document} Answer 0-3."\n')
    with pytest.raises(InputError, match="no line defines label 0"):
        scale_of(str(path))


# -- the journal and its replay --------------------------------------------------------------------


def test_events_replay_into_the_qrels_in_labelling_order(tmp_path):
    s = session(tmp_path)
    s.label("1001", "d1", 3)
    s.skip("1001", "d2", note="unsure")
    s.label("1001", "d3", 0, note="bumblebees")
    s.label("1001", "d4", 2)
    s.undo()  # takes back d4's label: d4 is shown again
    assert s.current().key == ("1001", "d4")
    s.label("1001", "d4", 3)
    assert (tmp_path / "ana.qrels").read_text() == "1001 0 d1 3\n1001 0 d3 0\n1001 0 d4 3\n"
    lines = [json.loads(x) for x in (tmp_path / "ana.journal.jsonl").read_text().splitlines()]
    assert [x["event"] for x in lines] == ["label", "skip", "label", "label", "undo", "label"]
    assert lines[1] == {**lines[1], "annotator": "ana", "qid": "1001", "docid": "d2", "note": "unsure"}
    assert lines[4]["docid"] == "d4" and lines[4]["time"].endswith("Z")
    assert lines[0]["digest"] == read_pairs(PAIRS)[0].digest
    # a new server on the same folder resumes at the first pair neither labelled nor skipped
    again = session(tmp_path)
    assert again.labels() == s.labels() and again.current().key == ("1001", "d5")
    assert again.progress() == {"labelled": 3, "skipped": 1, "total": 12}
    for p in read_pairs(PAIRS)[4:]:
        again.label(p.qid, p.docid, 1)
    assert again.current().key == ("1001", "d2")  # the skipped pair comes back at the end
    again.label("1001", "d2", 1)
    assert again.current() is None and again.progress()["labelled"] == 12


def test_a_line_cut_by_a_kill_is_dropped_and_nothing_acknowledged_is_lost(tmp_path, caplog):
    s = session(tmp_path)
    s.label("1001", "d1", 2)
    s.label("1001", "d2", 0)
    with open(s.journal, "a") as fh:
        fh.write('{"event": "label", "annotator": "ana", "ti')
    with caplog.at_level(logging.WARNING, "judgelab.annotate"):
        again = session(tmp_path)
    assert "dropped a last line cut before it was synced" in caplog.text
    assert again.labels() == {("1001", "d1"): 2, ("1001", "d2"): 0}
    assert s.journal.read_text().endswith("}\n") and again.current().key == ("1001", "d3")


def test_a_note_with_any_line_break_replays(tmp_path):
    s = session(tmp_path)
    s.label("1001", "d1", 1, note="first\u2028second\nthird \u00e9")
    s.label("1001", "d2", 0)
    again = session(tmp_path)
    assert again.events == s.events and again.events[0].note == "first\u2028second\nthird \u00e9"


def test_a_line_that_is_no_event_is_an_error_at_its_line(tmp_path):
    s = session(tmp_path)
    s.label("1001", "d1", 1)
    with open(s.journal, "a") as fh:
        fh.write('["label"]\n')
    with pytest.raises(InputError, match=r"ana\.journal\.jsonl:2: not a journal event"):
        session(tmp_path)


def test_a_journal_of_other_texts_or_pairs_is_an_error_at_its_line(tmp_path):
    s = session(tmp_path)
    s.label("1001", "d1", 2)
    s.label("1001", "d2", 1)
    changed = PAIRS.read_text().replace("Honey is sold", "Honey is found")
    (tmp_path / "changed.tsv").write_text(changed)
    with pytest.raises(InputError, match=r"ana\.journal\.jsonl:2: the text of pair 1001 d2 changed"):
        Session(read_pairs(tmp_path / "changed.tsv"), GRADED, tmp_path, "ana")
    (tmp_path / "fewer.tsv").write_text("".join(PAIRS.read_text().splitlines(True)[:2]))
    with pytest.raises(InputError, match=r"jsonl:2: pair 1001 d2 is not in the pairs file"):
        Session(read_pairs(tmp_path / "fewer.tsv"), GRADED, tmp_path, "ana")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: s.label("1001", "d1", 7), "label 7 is outside the scale [0, 1, 2, 3]"),
        (lambda s: s.label("1001", "d1", "2"), "label '2' is not an integer"),
        (lambda s: s.label("1001", "d1", True), "label True is not an integer"),
        (lambda s: s.label("9999", "d1", 1), "unknown pair 9999 d1"),
        (lambda s: s.label("1001", "d3", 1), "is not the one to label now"),
        (lambda s: s.skip("1001", "d1", note=["x"]), "the note must be text"),
        (lambda s: s.undo(), "nothing to undo"),
    ],
    ids=["label-7", "label-text", "label-bool", "unknown-pair", "not-shown", "note-list", "undo-nothing"],
)
def test_a_refused_event_writes_nothing(tmp_path, call, message):
    s = session(tmp_path)
    with pytest.raises(Refused) as err:
        call(s)
    assert message in str(err.value)
    assert not s.journal.exists() and (tmp_path / "ana.qrels").read_text() == ""


def test_an_annotator_name_is_a_file_name():
    with pytest.raises(InputError, match="annotator name '../x'"):
        Session(read_pairs(PAIRS), GRADED, "unused", "../x")


# -- the request handler ---------------------------------------------------------------------------


@pytest.fixture
def server(tmp_path):
    srv = AnnotationServer(session(tmp_path), "127.0.0.1", 0)
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def request(srv, method, path, body=None, headers=None):
    """One raw request (http.client sends the path as given: ``..`` is not resolved)."""
    conn = http.client.HTTPConnection(*srv.server_address[:2], timeout=10)
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    conn.request(method, path, body=data, headers=headers or {})
    response = conn.getresponse()
    out = response.status, dict(response.getheaders()), response.read()
    conn.close()
    return out


def test_the_page_and_its_files_are_served_under_the_token(server):
    status, headers, body = request(server, "GET", f"/{server.token}/")
    assert status == 200 and b'src="static/app.js"' in body
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    assert headers["Referrer-Policy"] == "no-referrer"
    for name in ("app.js", "app.css"):
        assert request(server, "GET", f"/{server.token}/static/{name}")[0] == 200
    status, _, body = request(server, "GET", f"/{server.token}/api/state")
    state = json.loads(body)
    assert state["pair"]["docid"] == "d1" and [x["label"] for x in state["scale"]] == [0, 1, 2, 3]
    assert request(server, "GET", f"/{server.token}")[1]["Location"] == f"/{server.token}/"


@pytest.mark.parametrize(
    ("method", "path", "status", "reason"),
    [
        ("GET", "/", 403, "no valid token in the URL"),
        ("GET", "/api/state", 403, "no valid token in the URL"),
        ("GET", "/not-the-token/api/state", 403, "no valid token in the URL"),
        ("POST", "/api/label", 403, "no valid token in the URL"),
        ("GET", "/{token}/../../../etc/passwd", 403, "path traversal refused"),
        ("GET", "/{token}/static/../server.py", 403, "path traversal refused"),
        ("GET", "/{token}/static/%2e%2e/server.py", 403, "path traversal refused"),
        ("GET", "/../{token}/static/app.js", 403, "path traversal refused"),
        ("GET", "/{token}/static/server.py", 404, "not a file this server serves"),
        ("GET", "/{token}/static/", 404, "not a file this server serves"),
        ("POST", "/{token}/api/delete", 404, "not an action this server takes"),
    ],
)
def test_requests_without_the_token_or_outside_its_files_are_refused_and_logged(
    server, caplog, method, path, status, reason
):
    path = path.format(token=server.token)
    with caplog.at_level(logging.WARNING, "judgelab.annotate"):
        got, _, body = request(server, method, path, {"qid": "1001", "docid": "d1", "label": 1})
    assert got == status and json.loads(body) == {"error": reason}
    assert f"({status}): {reason}" in caplog.text and server.token not in caplog.text
    assert not server.session.journal.exists()


@pytest.mark.parametrize(
    ("body", "status", "reason"),
    [
        ({"qid": "1001", "docid": "d1", "label": 7}, 400, "label 7 is outside the scale [0, 1, 2, 3]"),
        ({"qid": "1001", "docid": "nope", "label": 1}, 400, "unknown pair 1001 nope: not in the pairs file"),
        ({"qid": "1001", "docid": "d1"}, 400, "label None is not an integer"),
        (b"label=1", 400, "the request body is not JSON"),
        (b"[1, 2]", 400, "the request body is not a JSON object"),
        (b"{" + b" " * 70000 + b"}", 413, "a request body is at most 65536 bytes"),
    ],
    ids=["label-7", "unknown-pair", "no-label", "not-json", "not-an-object", "too-large"],
)
def test_a_bad_label_is_refused_with_its_message_logged_and_nothing_written(
    server, caplog, body, status, reason
):
    with caplog.at_level(logging.WARNING, "judgelab.annotate"):
        got, _, answer = request(server, "POST", f"/{server.token}/api/label", body)
    assert got == status and json.loads(answer)["error"] == reason
    if status == 400 and isinstance(body, dict):  # the page gets the state to show with the message
        assert json.loads(answer)["state"]["pair"]["docid"] == "d1"
    assert reason in caplog.text
    assert not server.session.journal.exists() and server.session.qrels.read_text() == ""


def test_a_label_is_synced_before_the_answer(server):
    status, _, body = request(
        server, "POST", f"/{server.token}/api/label", {"qid": "1001", "docid": "d1", "label": 2}
    )
    assert status == 200 and json.loads(body)["pair"]["docid"] == "d2"
    assert server.session.qrels.read_text() == "1001 0 d1 2\n"
    assert json.loads(server.session.journal.read_text())["label"] == 2
    status, _, body = request(server, "POST", f"/{server.token}/api/undo", {})
    assert status == 200 and json.loads(body)["pair"]["docid"] == "d1"
    assert server.session.qrels.read_text() == ""


def test_another_address_only_with_the_flag_and_a_warning(caplog):
    check_host("127.0.0.1", False)
    check_host("::1", False)
    with pytest.raises(InputError, match="pass --allow-remote"):
        check_host("0.0.0.0", False)
    with caplog.at_level(logging.WARNING, "judgelab.annotate"):
        check_host("0.0.0.0", True)
    assert "anyone who can reach this address" in caplog.text


def test_the_command_refuses_another_address_without_the_flag(tmp_path, capsys):
    from judgelab.cli import main

    code = main(
        ["annotate", "serve", str(PAIRS), "--out", str(tmp_path), "--annotator", "a", "--host", "0.0.0.0"]
    )
    assert code == 2 and "pass --allow-remote" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


# -- agreement -------------------------------------------------------------------------------------


def test_the_annotators_agreement_matches_the_references(tmp_path, capsys):
    import krippendorff

    from judgelab.annotate.agreement import annotator_agreement
    from judgelab.cli import main

    a = {"d1": 3, "d2": 0, "d3": 0, "d4": 2, "d5": 1, "d6": 0}
    b = {"d1": 3, "d2": 1, "d3": 0, "d4": 3, "d5": 1, "e1": 2}
    c = {"d1": 2, "d2": 0, "d4": 2, "e1": 3}
    paths = []
    for name, labels in (("ana", a), ("bob", b), ("cy", c)):
        paths.append(tmp_path / f"{name}.qrels")
        paths[-1].write_text("".join(f"1001 0 {d} {v}\n" for d, v in labels.items()))
    table = annotator_agreement(paths)
    ab = table.iloc[0]
    assert (ab["first"], ab["second"], ab["shared"]) == ("ana", "bob", 5)
    # by hand: 3 of 5 agree (p_o = 0.6); margins 2,1,1,1 and 1,2,0,2 give p_e = 6/25; kappa = 9/19
    assert ab["kappa"] == pytest.approx(9 / 19)
    items = ["d1", "d2", "d3", "d4", "d5", "d6", "e1"]
    data = [[lab.get(d, float("nan")) for d in items] for lab in (a, b, c)]
    everyone = table.iloc[-1]
    assert everyone["first"] == "all" and everyone["shared"] == 6  # d6: one annotator only
    assert everyone["alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal", value_domain=[0, 1, 2, 3])
    )
    assert main(["annotate", "agreement", *map(str, paths[:2])]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| first | second | shared | kappa |") and "| ana | bob | 5 |" in out
