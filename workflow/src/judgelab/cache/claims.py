"""Claims with a lease: how two processes asking the same uncached request pay for it once.

Before :class:`~judgelab.llm.client.CachedClient` sends a request it *claims* the request's key
in the cache; a process that finds the key claimed by another, live owner waits for that owner's
answer instead of sending the request itself. A claim carries a lease: its owner renews it while
it works (a background thread, :class:`LeaseKeeper`, every ``lease / 3`` seconds, so a provider
batch that runs for hours stays claimed) and releases it when the answer is stored or the call
failed. A claim whose lease has run out belongs to an owner that died (``kill -9``, a node lost):
the next asker takes it over and sends the request.

Two implementations, chosen by the cache's mode (:mod:`judgelab.cache`):

* ``wal`` mode: a table ``claims(key, owner, expires)`` in the cache file itself; claiming, the
  check that no answer arrived meanwhile and the takeover of expired claims happen in one
  ``BEGIN IMMEDIATE`` transaction, so two claimers can never both win a key.
* ``shards`` mode (several nodes): :class:`FileClaims`, one file per claimed key in
  ``<cache>.d/claims/`` created with ``O_CREAT | O_EXCL`` (atomic on local filesystems and on
  NFSv3+, Lustre, GPFS, BeeGFS); its content names the owner and its lease, its mtime is the
  last renewal. A takeover renames the stale file away first (only one renamer can succeed).
  Two takers racing for the same *expired* claim within milliseconds can, rarely, both win; then
  that one request is paid twice. Freshness compares the file's mtime (set by the file server)
  with the reader's clock, so the nodes' clocks must agree to well within a lease (NTP).

``owner`` (:func:`new_owner`) is ``host:boot:pidns:pid:start:random`` - the host, its boot id, the
PID namespace, the process id, the process's start time and a random tag; nothing secret is
stored. A claim whose owner is *provably* gone is taken over at once, not after its lease
(:func:`owner_gone`): an owner on this host, in this boot and this PID namespace, whose process
no longer runs (or whose pid now belongs to a process started at another time), or an owner of an
earlier boot of this host. Where that cannot be proven (another host, another PID namespace, an
owner in the older ``host:pid:random`` form) the lease rule stays.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            return fh.read().strip()
    except OSError:
        return None


def _start_time(pid: int) -> str | None:
    """The start time of process ``pid`` (clock ticks since boot, /proc/<pid>/stat field 22), or
    None where it does not run (or /proc is not there)."""
    stat = _read(f"/proc/{pid}/stat")
    if stat is None:
        return None
    # the command name (field 2) is in parentheses and may hold spaces: split after its end
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None


@functools.lru_cache(maxsize=1)
def _this_machine() -> tuple[str, str, str]:
    """(host, boot id, PID namespace) of this process; "" where the system does not tell."""
    host = socket.gethostname().replace(":", "_")
    boot = (_read("/proc/sys/kernel/random/boot_id") or "").replace(":", "")
    try:
        pidns = os.readlink("/proc/self/ns/pid").replace(":", "").replace("[", "").replace("]", "")
    except OSError:
        pidns = ""
    return host, boot, pidns


def new_owner() -> str:
    """The owner name of this process's claims (module docstring)."""
    host, boot, pidns = _this_machine()
    pid = os.getpid()
    return f"{host}:{boot}:{pidns}:{pid}:{_start_time(pid) or ''}:{uuid.uuid4().hex[:12]}"


def owner_gone(owner: str) -> bool:
    """Whether the process that holds claims as ``owner`` provably no longer runs (module
    docstring); False where it may still run or that cannot be told."""
    parts = owner.split(":")
    if len(parts) != 6:
        return False  # an older owner form, or an unreadable claim: the lease decides
    host, boot, pidns, pid, start, _ = parts
    this_host, this_boot, this_pidns = _this_machine()
    if host != this_host or not boot or not this_boot:
        return False
    if boot != this_boot:
        return True  # this host has rebooted since: no process of that boot runs
    if not pidns or pidns != this_pidns or not pid.isdigit() or not start:
        return False
    return _start_time(int(pid)) != start


@dataclass
class Claimed:
    """What a claim attempt found for each key asked, in the order asked.

    ``mine``: claimed by the caller now (it must send them, then release them); ``answered``:
    key -> response (answered meanwhile: nothing to send); ``busy``: key -> owner (claimed by
    another live owner: wait); ``rest``: claimable, but beyond the requested limit (not claimed);
    ``taken_over``: owners whose expired claims the caller took over (logged)."""

    mine: list[str] = field(default_factory=list)
    answered: dict[str, dict] = field(default_factory=dict)
    busy: dict[str, str] = field(default_factory=dict)
    rest: list[str] = field(default_factory=list)
    taken_over: list[str] = field(default_factory=list)


class LeaseKeeper:
    """A daemon thread calling ``renew()`` every ``interval`` seconds until :meth:`stop`.

    ``renew`` errors are logged, never raised: a lease that cannot be renewed runs out, and the
    worst that follows is that another process sends the same request too."""

    def __init__(self, renew: Callable[[], None], interval: float, name: str = "judgelab-lease"):
        self._renew, self.interval = renew, interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self._renew()
            except Exception as exc:  # noqa: BLE001 - logged: a lapsed lease is not fatal
                log.warning("could not renew the cache claims' lease: %s", exc)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


class FileClaims:
    """Claims as files in ``folder`` (``shards`` mode); see the module docstring."""

    def __init__(self, folder: str | Path, owner: str, lease: float):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.owner, self.lease = owner, float(lease)
        self._content = json.dumps({"owner": owner, "lease": self.lease})

    def _path(self, key: str) -> Path:
        return self.folder / key

    def holder(self, key: str) -> tuple[str, float, float] | None:
        """``(owner, mtime, lease)`` of the claim on ``key``, or None (not claimed)."""
        path = self._path(key)
        try:
            st = path.stat()
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            obj = json.loads(text)
            return str(obj["owner"]), st.st_mtime, float(obj["lease"])
        except (ValueError, KeyError, TypeError):
            # a claim file being written right now (created, content not yet flushed) or torn by a
            # crash: judged by its age with the caller's lease
            return "<unreadable claim>", st.st_mtime, self.lease

    def fresh(self, holder: tuple[str, float, float]) -> bool:
        """Whether a claim still holds: within its lease and its owner not provably gone."""
        return holder[1] + holder[2] > time.time() and not owner_gone(holder[0])

    def _create(self, key: str) -> bool:
        try:
            fd = os.open(self._path(key), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(self._content)
        return True

    def acquire(self, key: str, seen: tuple[str, float, float] | None) -> bool:
        """Claim ``key``; ``seen``: its holder as just read (None: unclaimed; else an expired claim
        or one of ours). True if the caller holds the claim now."""
        if seen is None:
            return self._create(key)
        if seen[0] == self.owner:
            self.renew([key])
            return True
        path = self._path(key)
        stale = path.with_name(f"{key}.{uuid.uuid4().hex[:8]}.stale")
        try:
            os.rename(path, stale)
        except FileNotFoundError:  # released or taken over meanwhile
            return self._create(key)
        try:
            st = stale.stat()
            moved_owner = json.loads(stale.read_text(encoding="utf-8")).get("owner")
        except (OSError, ValueError, AttributeError):
            moved_owner, st = None, None
        if st is not None and moved_owner == seen[0] and st.st_mtime == seen[1]:
            os.unlink(stale)
            return self._create(key)
        # we moved someone's fresh claim (taken over between our read and our rename): put it back
        try:
            os.link(stale, path)
        except FileExistsError:  # a third process claimed the key meanwhile: that claim stands
            log.debug("claim on %s… re-made by another process during a takeover", key[:12])
        os.unlink(stale)
        return False

    def renew(self, keys: list[str]) -> None:
        """Touch the claim files of ``keys`` (those that still exist)."""
        for key in keys:
            try:
                os.utime(self._path(key))
            except FileNotFoundError:
                log.warning(
                    "the claim on request %s… was lost (taken over after its lease ran out?)", key[:12]
                )

    def release(self, keys: list[str]) -> None:
        """Remove the claims of ``keys`` that are still ours."""
        for key in keys:
            held = self.holder(key)
            if held is not None and held[0] == self.owner:
                # missing_ok: removed by a takeover between the read and the unlink
                self._path(key).unlink(missing_ok=True)
