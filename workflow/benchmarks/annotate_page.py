"""``judgelab annotate``'s page, timed, and its screenshot for docs/annotate.md.

    python3 workflow/benchmarks/annotate_page.py [--rounds 100] [--screenshot docs/annotate.png]

On the two-topic test fixture (``tests/fixtures/annotate_pairs.tsv``, 12 pairs), in a fresh folder:

1. the server's start: ``judgelab annotate serve`` as a subprocess, until it prints its URL;
2. a label's round trip without a browser: ``--rounds`` times a label POST and an undo POST
   (``http.client``, a connection each, as the page's ``fetch`` gets from this HTTP/1.0 server),
   each answered once its journal line is synced and the qrels file rewritten;
3. in headless Chromium (Debian's, through /usr/bin/chromedriver): the page's load (``get`` until
   the first pair is shown, and the browser's own navigation timing), and a label by key until
   the next pair is shown, for 11 labels (the page's ``annotateTimings``: request sent to answer
   shown; and the key press to the next pair as the driver sees it);
4. a screenshot after three labels, a note typed (``--screenshot``).

Prints a Markdown table of medians and 95th percentiles in milliseconds.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import ROOT, run_env

PAIRS = ROOT / "tests" / "fixtures" / "annotate_pairs.tsv"


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def start(out: Path) -> tuple[subprocess.Popen, str, float]:
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "judgelab.cli", "annotate", "serve", str(PAIRS), "--out", str(out)]
        + ["--annotator", "bench"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=run_env(),
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("open http://"):
            return proc, line.split()[1], time.perf_counter() - t0
    raise SystemExit(f"the server printed no URL (exit {proc.wait()})")


def post(host: str, port: int, path: str, body: dict) -> dict:
    conn = http.client.HTTPConnection(host, port, timeout=10)
    conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    response = conn.getresponse()
    data = json.loads(response.read())
    conn.close()
    if response.status != 200:
        raise SystemExit(f"{path}: {response.status} {data}")
    return data


def http_rounds(url: str, rounds: int) -> tuple[list[float], list[float]]:
    host_port, _, token = url.removeprefix("http://").rstrip("/").partition("/")
    host, port = host_port.split(":")
    labels, undos = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        post(host, int(port), f"/{token}/api/label", {"qid": "1001", "docid": "d1", "label": 2})
        t1 = time.perf_counter()
        post(host, int(port), f"/{token}/api/undo", {})
        t2 = time.perf_counter()
        labels.append((t1 - t0) * 1000)
        undos.append((t2 - t1) * 1000)
    return labels, undos


def browser_rounds(url: str, screenshot: Path | None) -> dict[str, list[float]]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1100,820"):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))
    out: dict[str, list[float]] = {"load": [], "navigation": [], "key": []}
    try:

        def body(attr: str) -> str:
            return driver.find_element("tag name", "body").get_attribute(f"data-{attr}") or ""

        t0 = time.perf_counter()
        driver.get(url)
        WebDriverWait(driver, 10, poll_frequency=0.005).until(lambda d: body("pair") == "1001 d1")
        out["load"].append((time.perf_counter() - t0) * 1000)
        nav = driver.execute_script(
            "const n = performance.getEntriesByType('navigation')[0]; return n.loadEventEnd - n.startTime;"
        )
        out["navigation"].append(float(nav))
        for n in range(1, 12):
            if n == 4 and screenshot is not None:
                driver.find_element("id", "note").send_keys("answers it: enzymes and evaporation")
                driver.find_element("id", "note").send_keys("\ue00c")  # Escape: leave the note
                screenshot.parent.mkdir(parents=True, exist_ok=True)
                driver.save_screenshot(str(screenshot))
            t0 = time.perf_counter()
            driver.find_element("tag name", "body").send_keys(str(n % 4))
            WebDriverWait(driver, 10, poll_frequency=0.005).until(lambda d, n=n: body("labelled") == str(n))
            out["key"].append((time.perf_counter() - t0) * 1000)
        out["fetch"] = [float(x) for x in driver.execute_script("return window.annotateTimings;")[1:]]
    finally:
        driver.quit()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=100, help="label + undo round trips over HTTP")
    ap.add_argument("--screenshot", type=Path, default=None, help="PNG of the page after three labels")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        proc, url, started = start(Path(tmp) / "http")
        try:
            labels, undos = http_rounds(url, args.rounds)
        finally:
            proc.kill()
            proc.wait()
        rows.append(("server start until its URL is printed", [started * 1000]))
        rows.append((f"label POST, answered after its sync ({args.rounds})", labels))
        rows.append((f"undo POST ({args.rounds})", undos))
        proc, url, _ = start(Path(tmp) / "browser")
        try:
            b = browser_rounds(url, args.screenshot)
        finally:
            proc.kill()
            proc.wait()
    rows.append(("page load: get until the first pair is shown", b["load"]))
    rows.append(("page load: the browser's navigation timing (to loadEventEnd)", b["navigation"]))
    rows.append(("label by key: request sent to the next pair shown (page's own timing, 11)", b["fetch"]))
    rows.append(("label by key: key press to the next pair shown (driver's view, 11)", b["key"]))
    print("| what | n | median ms | p95 ms |\n|---|---:|---:|---:|")
    for name, values in rows:
        print(f"| {name} | {len(values)} | {statistics.median(values):.1f} | {pct(values, 0.95):.1f} |")


if __name__ == "__main__":
    main()
