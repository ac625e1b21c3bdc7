"""``judgelab annotate`` in a real headless browser (Debian's chromium and chromium-driver, selenium
pointed at /usr/bin/chromedriver: Selenium Manager's own download fails offline). On a two-topic
fixture (12 pairs): label 10 pairs by keyboard, undo one, kill the server (SIGKILL), restart it,
finish; the qrels file holds exactly the surviving labels, in order, and PPI on them runs (the
ranking study's estimate job gives every system an interval). Skips where no browser is
installed (`.ci/run` installs it)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import FIXTURES

from judgelab.annotate.pairs import read_pairs

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
PAIRS = FIXTURES / "annotate_pairs.tsv"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()),
        reason="no chromium and chromium-driver (apt-get install chromium chromium-driver; .ci/run does)",
    ),
]


def start_server(out: Path) -> tuple[subprocess.Popen, str]:
    """``judgelab annotate serve`` in its own process, and the URL it prints."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "judgelab.cli", "annotate", "serve", str(PAIRS), "--out", str(out)]
        + ["--annotator", "ana"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=os.environ.copy(),
    )
    assert proc.stdout is not None
    for line in proc.stdout:  # the URL line comes once the journal is replayed
        if line.startswith("open http://127.0.0.1:"):
            return proc, line.split()[1]
    raise AssertionError(f"the server printed no URL (exit {proc.wait()})")


@pytest.fixture(scope="module")
def browser():
    webdriver = pytest.importorskip(
        "selenium.webdriver", reason="selenium is not installed (the test extras)"
    )
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1100,900",
    ):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    yield driver
    driver.quit()


def wait_for(driver, what: str, value: str) -> None:
    """Until the page shows the server's answer: ``body[data-<what>]`` is ``value``."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 10).until(
        lambda d: d.find_element("tag name", "body").get_attribute(f"data-{what}") == value
    )


def press(driver, key: str) -> None:
    driver.find_element("tag name", "body").send_keys(key)


def test_label_undo_kill_restart_finish(browser, tmp_path):
    pairs = read_pairs(PAIRS)
    given = [3, 0, 1, 2, 0, 0, 2, 1, 3, 1]  # the first ten pairs' labels
    out = tmp_path / "labels"
    proc, url = start_server(out)
    try:
        browser.get(url)
        wait_for(browser, "pair", "1001 d1")
        assert "how do bees make honey" in browser.find_element("id", "query").text
        assert "Non-relevant" in browser.find_element("id", "scale").text  # UMBRELA's definitions
        press(browser, "7")  # not a label of the scale: said on the page, nothing sent
        assert "7 is not a label of this scale" in browser.find_element("id", "message").text
        for n, label in enumerate(given, start=1):
            press(browser, str(label))
            wait_for(browser, "labelled", str(n))
        press(browser, "u")  # takes back the tenth label: its pair is shown again
        wait_for(browser, "labelled", "9")
        wait_for(browser, "pair", f"{pairs[9].qid} {pairs[9].docid}")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    survived = [f"{p.qid} 0 {p.docid} {v}\n" for p, v in zip(pairs, given[:9])]
    assert (out / "ana.qrels").read_text().splitlines(True) == survived

    proc, url = start_server(out)  # a new token: the old page's URL no longer works
    try:
        browser.get(url)
        wait_for(browser, "pair", f"{pairs[9].qid} {pairs[9].docid}")  # resumes at the undone pair
        assert browser.find_element("id", "progress-text").text == "9 / 12 labelled"
        for n, label in enumerate([2, 0, 1], start=10):
            press(browser, str(label))
            wait_for(browser, "labelled", str(n))
        wait_for(browser, "pair", "")
        assert browser.find_element("id", "done").is_displayed()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finished = survived + [f"{p.qid} 0 {p.docid} {v}\n" for p, v in zip(pairs[9:], [2, 0, 1])]
    assert (out / "ana.qrels").read_text().splitlines(True) == finished
    events = [json.loads(line)["event"] for line in (out / "ana.journal.jsonl").read_text().splitlines()]
    assert events == ["label"] * 10 + ["undo"] + ["label"] * 3

    # PPI on them runs: the ranking study's estimate job on the session's qrels (its two topics) and
    # a hand-made judge on two more topics (tests/annotate_ppi.py)
    from annotate_ppi import ORDERS, estimate

    table = estimate(tmp_path / "ppi", [str(out / "ana.qrels")])
    assert list(table["system"]) == list(ORDERS) and set(table["annotators"]) == {"ana"}
    assert set(table["n_annotated"]) == {2} and set(table["n_topics"]) == {4}
    for row in table.itertuples():
        assert np.isfinite([row.ppi_low, row.ppi, row.ppi_high, row.human_low, row.human_high]).all()
        assert row.ppi_low <= row.ppi <= row.ppi_high and row.ppi_low < row.ppi_high
