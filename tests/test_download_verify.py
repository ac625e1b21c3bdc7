"""Downloads are verified: a download that ends early (a real local HTTP server that sends less
than it announces, a ``file://`` source cut short) fails naming the URL and both byte counts and
leaves nothing under the final name; the known public files' sizes and SHA-256 are checked; a
downloaded raw file that fails to parse names how to fetch it again."""

from __future__ import annotations

import hashlib
import http.server
import json
import threading
from pathlib import Path

import pytest
from conftest import free_port

from judgelab.data import sources
from judgelab.data.prepare import prepare_table
from judgelab.data.sources import (
    DOWNLOAD_RULE,
    KNOWN_FILES,
    SOURCES,
    DownloadError,
    download,
    download_dataset,
    known_file,
    refetch_hint,
    source_urls,
)
from judgelab.errors import InputError
from judgelab.studies.simulation.data import PANDALM_URL, download_records


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch):
    """Retries as in production, without its waits."""
    monkeypatch.setattr(sources, "RETRY_DELAYS", (0.01, 0.01, 0.01))


class Server:
    """A real HTTP server on 127.0.0.1 serving ``routes``: path -> (body, bytes to send, status), or
    a list of those answered in turn (the last one repeated). It announces ``len(body)`` in
    Content-Length (none where ``length`` is False) and then sends only the first ``send`` bytes;
    ``content_type``: its Content-Type header. ``hits`` counts the requests of each path."""

    def __init__(self, routes: dict, *, length: bool = True, content_type: str | None = None):
        self.routes = routes
        self.port = free_port()
        self.hits: dict[str, int] = {}
        routes_, hits = routes, self.hits

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                answers = routes_.get(self.path, (b"not here", 8, 404))
                n = hits[self.path] = hits.get(self.path, 0) + 1
                if isinstance(answers, list):
                    answers = answers[min(n, len(answers)) - 1]
                body, send, status = answers
                self.send_response(status)
                if length:
                    self.send_header("Content-Length", str(len(body)))
                if content_type:
                    self.send_header("Content-Type", content_type)
                self.end_headers()
                self.wfile.write(body[:send])
                self.wfile.flush()
                self.close_connection = True

            def log_message(self, *args):  # keep the test output clean
                return None

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        # a short poll: shutdown() waits for the loop's next poll (0.5 s by default, per test)
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def __enter__(self) -> Server:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def jsonl_records(n: int) -> bytes:
    rec = {"evaluator": "e1", "context": "c", "response_a": "a", "response_b": "b", "label": "A"}
    return b"".join(json.dumps({**rec, "item": f"i{i}"}).encode() + b"\n" for i in range(n))


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_server_sending_half_of_what_it_announces_fails_and_leaves_nothing(tmp_path):
    body = jsonl_records(90)
    cut = body.index(b"\n", len(body) // 2) + 1  # at a line boundary: 45-ish complete records
    with Server({"/set.jsonl": (body, cut, 200)}) as srv:
        url = srv.url("/set.jsonl")
        with pytest.raises(DownloadError) as err:
            download(url, tmp_path / "set.jsonl")
        # the simulation's download of an evaluator set fails the same way, loading nothing
        with pytest.raises(DownloadError):
            download_records(tmp_path / "records.jsonl", url, "jsonl")
    e = err.value
    assert (e.url, e.received, e.expected) == (url, cut, len(body))
    assert url in str(e) and f"{cut:,} bytes arrived" in str(e) and f"{len(body):,} bytes expected" in str(e)
    assert leftovers(tmp_path) == []  # no file under the final name, no partial file either


def test_complete_http_download_is_kept_with_its_record(tmp_path):
    body = jsonl_records(90)
    with Server({"/set.jsonl": (body, len(body), 200)}) as srv:
        dest = download(
            srv.url("/set.jsonl"),
            tmp_path / "set.jsonl",
            size=len(body),
            sha256=hashlib.sha256(body).hexdigest(),
        )
        assert len(download_records(tmp_path / "records.jsonl", srv.url("/set.jsonl"), "jsonl")) == 90
    assert dest.read_bytes() == body
    record = json.loads((tmp_path / "set.jsonl.download.json").read_text())
    assert record["bytes"] == len(body) and record["verified"] is True
    assert record["sha256"] == hashlib.sha256(body).hexdigest()


def test_wrong_checksum_or_http_error_leaves_nothing(tmp_path):
    body = b"x" * 1000
    with Server({"/f": (body, len(body), 200)}) as srv:
        with pytest.raises(DownloadError, match="has SHA-256"):
            download(srv.url("/f"), tmp_path / "f", sha256="0" * 64)
        with pytest.raises(DownloadError, match=r"failed \(HTTP Error 404") as err:
            download(srv.url("/missing"), tmp_path / "g")
    assert srv.url("/missing") in str(err.value)
    assert leftovers(tmp_path) == []


def test_failed_redownload_keeps_the_earlier_complete_file(tmp_path):
    dest = tmp_path / "qrels.raw"
    dest.write_bytes(b"101 Q0 d1 3\n")
    body = b"y" * 4000
    with Server({"/q": (body, 100, 200)}) as srv, pytest.raises(DownloadError, match="ended early"):
        download(srv.url("/q"), dest)
    assert dest.read_bytes() == b"101 Q0 d1 3\n"
    assert leftovers(tmp_path) == ["qrels.raw"]


def test_file_url_cut_halfway_with_known_size_fails(tmp_path, fixtures):
    full = (fixtures / "trec" / "texts.tsv").read_bytes()
    cut = tmp_path / "mirror" / "texts.tsv"
    cut.parent.mkdir()
    cut.write_bytes(full[: len(full) // 2])
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(DownloadError) as err:
        download(cut.as_uri(), out / "texts.raw", size=len(full))
    assert (err.value.received, err.value.expected) == (len(full) // 2, len(full))
    assert cut.as_uri() in str(err.value)
    assert leftovers(out) == []


def test_file_url_with_a_recorded_size_is_checked_by_download_dataset(tmp_path, monkeypatch):
    """A URL recorded in KNOWN_FILES (here a ``file://`` mirror recorded with DL19's qrels' size,
    187,092 bytes) is checked by the dataset download: a copy cut halfway cannot pass as complete.
    File names alone are not matched (the bundled samples carry the public names)."""
    mirror = tmp_path / "qrels.dl19-passage.txt"
    mirror.write_bytes(b"19335 0 1017759 0\n" * 5000)  # 90,000 bytes: about half
    assert known_file(mirror.as_uri()) is None
    monkeypatch.setitem(KNOWN_FILES, mirror.as_uri(), KNOWN_FILES[SOURCES["dl19"]["qrels"]])
    urls = source_urls("dl19", {"qrels": mirror.as_uri()})
    dest = {k: tmp_path / "raw" / f"{k}.raw" for k in ("qrels", "topics", "texts")}
    with pytest.raises(DownloadError, match="does not have the expected size") as err:
        download_dataset(urls, dest)
    assert (err.value.received, err.value.expected) == (90_000, 187_092)
    assert "KNOWN_FILES" in str(err.value)
    assert not dest["qrels"].exists()


def test_every_public_source_has_a_record_except_the_llmjudge_passages():
    urls = [u for src in SOURCES.values() for k, u in src.items() if k != "format"]
    missing = [u for u in urls if u not in KNOWN_FILES]
    assert missing == [SOURCES["llmjudge"]["texts"]]
    assert PANDALM_URL in KNOWN_FILES
    for url, known in KNOWN_FILES.items():
        assert known.size > 0 and len(known.sha256) == 64, url


def test_recorded_sizes_and_checksums_match_the_shared_copies(shared_data):
    local = {f"qrels_text.{d}": f"trec-dl/qrels_text.{d}.tsv" for d in ("dl19", "dl20", "dl21")}
    local["testset-v1.json"] = "pandalm/testset-v1.json"
    for url, known in KNOWN_FILES.items():
        name = url.rsplit("/", 1)[-1]
        rel = local.get(name) or (f"llmjudge/{name}" if "LLMJudge" in url else f"trec-dl/{name}")
        data = (shared_data / rel).read_bytes()
        assert (len(data), hashlib.sha256(data).hexdigest()) == (known.size, known.sha256), url


def test_verified_download_of_a_shared_copy(shared_data, tmp_path):
    """The shared copy served by a real HTTP server passes the checks recorded for its public URL."""
    data = (shared_data / "trec-dl" / "topics.dl20.txt").read_bytes()
    known = KNOWN_FILES[SOURCES["dl20"]["topics"]]
    with Server({"/topics.dl20.txt": (data, len(data), 200)}) as srv:
        dest = download(
            srv.url("/topics.dl20.txt"), tmp_path / "topics.raw", size=known.size, sha256=known.sha256
        )
    assert json.loads((tmp_path / "topics.raw.download.json").read_text())["verified"] is True
    assert dest.read_bytes() == data


def _downloaded_trec(tmp_path: Path, fixtures: Path, qrels_bytes: bytes | None = None) -> dict[str, Path]:
    src = tmp_path / "src"
    src.mkdir()
    for name in ("qrels.txt", "topics.txt", "texts.tsv"):
        (src / name).write_bytes((fixtures / "trec" / name).read_bytes())
    if qrels_bytes is not None:
        (src / "qrels.txt").write_bytes(qrels_bytes)
    urls = {
        "qrels": (src / "qrels.txt").as_uri(),
        "topics": (src / "topics.txt").as_uri(),
        "texts": (src / "texts.tsv").as_uri(),
    }
    dest = {k: tmp_path / "raw" / "fx" / f"{k}.raw" for k in urls}
    download_dataset(urls, dest)
    return dest


SELECTION = {
    "format": "trec",
    "encoding": None,
    "queries": None,
    "max_queries": None,
    "per_grade": None,
    "seed": 0,
    "docid_map": None,
}


def test_downloaded_file_cut_after_download_names_the_command_that_refetches_it(tmp_path, fixtures):
    dest = _downloaded_trec(tmp_path, fixtures)
    full = dest["texts"].read_bytes()
    dest["texts"].write_bytes(full[: full.index(b"\n") + 1])  # cut after the download
    with pytest.raises(InputError) as err:
        prepare_table("fx", SELECTION, dest["qrels"], dest["topics"], dest["texts"])
    msg = str(err.value)
    assert msg.startswith(f"{dest['texts']}: has 1 lines")
    assert "changed since it was downloaded" in msg
    assert f"rm {dest['texts']}" in msg and f"rule {DOWNLOAD_RULE}" in msg


def test_bad_downloaded_file_names_its_url_and_line(tmp_path, fixtures):
    good = (fixtures / "trec" / "qrels.txt").read_bytes()
    dest = _downloaded_trec(tmp_path, fixtures, good + b"101 Q0 d9\n")
    with pytest.raises(InputError) as err:
        prepare_table("fx", SELECTION, dest["qrels"], dest["topics"], dest["texts"])
    msg = str(err.value)
    line = good.count(b"\n") + 1
    assert msg.startswith(f"{dest['qrels']}:{line}: expected 4 fields")
    assert "downloaded from file://" in msg and f"rm {dest['qrels']}" in msg


def test_files_not_downloaded_get_no_refetch_hint(tmp_path, fixtures):
    bad = tmp_path / "qrels.txt"
    bad.write_text("101 Q0 d1\n")
    d = fixtures / "trec"
    with pytest.raises(InputError) as err:
        prepare_table("fx", SELECTION, bad, d / "topics.txt", d / "texts.tsv")
    assert str(err.value) == f"{bad}:1: expected 4 fields 'qid Q0 docid grade', got 3: '101 Q0 d1'"
    assert refetch_hint(bad) is None


def test_refetch_hint_of_an_intact_verified_file_says_refetching_will_not_help(tmp_path, fixtures):
    data = (fixtures / "trec" / "topics.txt").read_bytes()
    src = tmp_path / "topics.txt"
    src.write_bytes(data)
    dest = download(src.as_uri(), tmp_path / "t.raw", size=len(data))
    assert "will not change it" in refetch_hint(dest)


# -- retries, HTML error pages, bodies without a length -------------------------------------------------


def test_a_server_that_fails_with_500_then_answers_is_retried_and_the_download_succeeds(tmp_path):
    body = jsonl_records(20)
    flaky = [(b"busy", 4, 500), (b"busy", 4, 503), (body, len(body), 200)]
    with Server({"/set.jsonl": flaky}) as srv:
        dest = download(
            srv.url("/set.jsonl"), tmp_path / "set.jsonl", sha256=hashlib.sha256(body).hexdigest()
        )
        assert srv.hits["/set.jsonl"] == 3
    assert dest.read_bytes() == body


def test_a_connection_cut_short_is_retried_and_a_4xx_is_final(tmp_path):
    body = b"z" * 3000
    with Server({"/cut": [(body, 100, 200), (body, len(body), 200)], "/gone": (b"no", 2, 404)}) as srv:
        assert download(srv.url("/cut"), tmp_path / "cut").read_bytes() == body
        assert srv.hits["/cut"] == 2
        with pytest.raises(DownloadError, match=r"HTTP Error 404"):
            download(srv.url("/gone"), tmp_path / "gone")
        assert srv.hits["/gone"] == 1  # not retried
    with Server({"/down": (b"busy", 4, 502)}) as srv:
        with pytest.raises(DownloadError, match=r"HTTP Error 502.*\(4 attempts\)"):
            download(srv.url("/down"), tmp_path / "down")
        assert srv.hits["/down"] == 1 + len(sources.RETRY_DELAYS)
    assert leftovers(tmp_path) == ["cut", "cut.download.json"]


def test_an_html_page_served_with_200_is_refused_at_download(tmp_path):
    page = b"<!DOCTYPE html>\n<html><body>Rate limit exceeded</body></html>\n"
    with Server({"/qrels.txt": (page, len(page), 200)}, content_type="text/html; charset=utf-8") as srv:
        with pytest.raises(DownloadError, match=r"sent an HTML page \(Content-Type text/html") as err:
            download(srv.url("/qrels.txt"), tmp_path / "qrels.raw")
    assert "not the data file" in str(err.value)
    with Server({"/qrels.txt": (page, len(page), 200)}) as srv:  # no Content-Type: the body tells
        with pytest.raises(DownloadError, match="sent an HTML page"):
            download(srv.url("/qrels.txt"), tmp_path / "qrels.raw")
    assert leftovers(tmp_path) == []


def test_a_body_without_a_length_that_ends_early_fails_where_a_digest_is_known(tmp_path):
    body = b"101 Q0 d1 3\n" * 300
    with Server({"/q": (body, len(body) // 2, 200)}, length=False) as srv:
        with pytest.raises(DownloadError, match="has SHA-256"):
            download(srv.url("/q"), tmp_path / "q", sha256=hashlib.sha256(body).hexdigest())
        with pytest.raises(DownloadError, match="does not have the expected size"):
            download(srv.url("/q"), tmp_path / "q", size=len(body))
    assert leftovers(tmp_path) == []
