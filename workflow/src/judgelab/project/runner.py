"""What every workflow script shares: the job's log (:func:`script_logging`: logging and stderr,
tqdm's progress bars included, into the file of the rule's ``log:``) and reading a param that
arrives as JSON text (:func:`as_value`)."""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path

log = logging.getLogger("judgelab")


@contextlib.contextmanager
def script_logging(path: str | None) -> Iterator[None]:
    """Send logging and stderr (tqdm progress bars) of a job to its log file."""
    if not path:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
        yield
        return
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", buffering=1, encoding="utf-8") as fh:
        old = sys.stderr
        sys.stderr = fh
        handler = logging.StreamHandler(fh)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root = logging.getLogger()
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        try:
            yield
        except BaseException:
            log.exception("job failed")
            raise
        finally:
            root.removeHandler(handler)
            sys.stderr = old


def as_value(v):
    """A param that may arrive as a JSON string (tracked params are strings) or as the value."""
    return json.loads(v) if isinstance(v, str) else v
