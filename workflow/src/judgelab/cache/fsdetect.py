"""Which filesystem holds a path, and whether it is a network filesystem.

SQLite's WAL mode keeps its index in a memory-mapped ``-shm`` file, which processes on different
hosts cannot share: a cache in WAL mode on NFS, Lustre, GPFS, CIFS, BeeGFS, CephFS ... opened
from several nodes can lose or corrupt answers. :func:`network_filesystem` tells the request
cache (:mod:`judgelab.cache`) when its file is on such a filesystem, so that it can refuse WAL
there.

Detection (Linux): the mount table ``/proc/self/mounts`` (``device mountpoint fstype options
dump pass``, with spaces and other special characters in paths written as octal escapes such as
``\\040``) is read, the path is resolved (symlinks of its existing part followed; a part that does not
exist yet is kept as written) and the mount whose mount point is the longest prefix of
it is taken (when several mounts share that mount point, the one listed last: it is the one on
top). Where the table cannot be read (not Linux), nothing is detected and the result is None.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

#: The mount table read by default (a module attribute, so a test can point it at a fake table).
MOUNTS = Path("/proc/self/mounts")

#: Filesystem types (the third field of the mount table) shared between hosts over a network.
NETWORK_FS = frozenset(
    {
        "nfs",
        "nfs4",
        "cifs",
        "smb3",
        "smbfs",
        "lustre",
        "gpfs",
        "beegfs",
        "ceph",
        "glusterfs",
        "afs",
        "panfs",
        "pvfs2",
        "orangefs",
        "wekafs",
        "quobyte",
        "ocfs2",
        "gfs2",
        "davfs",
        "fuse.glusterfs",
        "fuse.sshfs",
        "fuse.ceph",
        "fuse.ceph-fuse",
        "fuse.gcsfuse",
        "fuse.s3fs",
        "fuse.rclone",
        "fuse.lizardfs",
        "fuse.moosefs",
        "fuse.juicefs",
    }
)


def _unescape(field: str) -> str:
    """A mount-table field with its octal escapes (``\\040`` = space) decoded."""
    if "\\" not in field:
        return field
    out, i = [], 0
    while i < len(field):
        code = field[i + 1 : i + 4]
        if field[i] == "\\" and len(code) == 3 and all(c in "01234567" for c in code):
            out.append(chr(int(code, 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def parse_mounts(text: str) -> list[tuple[str, str]]:
    """``(mount point, filesystem type)`` of every well-formed line of a mount table, in table
    order; lines with fewer than three fields are skipped."""
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            out.append((_unescape(parts[1]), parts[2]))
    return out


def _real(path: Path) -> str:
    """``path`` absolute with the symlinks of its existing part resolved (a cache file, even its
    folder, may not exist yet: the rest is kept as written)."""
    return os.path.realpath(os.path.abspath(path))


def mount_of(path: str | Path, mounts: str | None = None) -> tuple[str, str] | None:
    """``(mount point, filesystem type)`` of the mount holding ``path``; ``mounts``: the text of a
    mount table (default: :data:`MOUNTS`). None when no table can be read."""
    if mounts is None:
        try:
            mounts = MOUNTS.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            log.debug("cannot read %s (%s): filesystem type unknown", MOUNTS, exc)
            return None
    target = _real(Path(path))
    best: tuple[str, str] | None = None
    for point, fstype in parse_mounts(mounts):
        inside = target == point or point == "/" or target.startswith(point.rstrip("/") + "/")
        if inside and (best is None or len(point) >= len(best[0])):
            best = (point, fstype)
    return best


def is_network_type(fstype: str) -> bool:
    """Whether a filesystem type is shared over a network (:data:`NETWORK_FS`; every ``nfs*``
    type except the NFS server's own ``nfsd``)."""
    return fstype in NETWORK_FS or (fstype.startswith("nfs") and fstype != "nfsd")


def network_filesystem(path: str | Path, mounts: str | None = None) -> tuple[str, str] | None:
    """``(filesystem type, mount point)`` if ``path`` is on a network filesystem, else None (also
    None when the mount table cannot be read)."""
    found = mount_of(path, mounts)
    if found is not None and is_network_type(found[1]):
        return found[1], found[0]
    return None
