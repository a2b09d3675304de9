"""The disk cache of downloaded catalogs (one folder per catalog URL, one file per version).

A cache file is not trusted because it is ours: each ends with a seal, the sha256 of the bytes
before it, and a file whose seal does not match (a flipped bit, a torn write, an older format)
reads as absent and is removed. Files are written to a temporary file in the same folder,
then renamed into place (`os.replace`), so a concurrent reader or writer never finds a
half-written file; `put` says whether that worked, so that a pointer such as `latest.json` is
only written once what it names is in place. Nothing is fsync'ed: this is a cache, and the seal
already turns what a power loss can leave behind (an empty or torn file, a pointer whose file
did not reach the disk) into a miss that costs one download. Syncing each of the ~20 files of a
load cost 40-70 ms of a 0.3 s load on this project's machine, more on a busy disk.
Temporary files of writers killed mid-write are removed by the next write in their folder once
they are `ORPHAN_AGE` seconds old, and at every successful load in any folder of the cache
(`remove_orphans`): a folder never written again keeps none forever. The folder is the user
cache dir (platformdirs), or the one `Settings.cache_dir` names.

The cache never follows a link out of itself: a folder or file inside a catalog's folder that is
a symbolic link (a shared cache, a dotfile manager's link) is neither read, written through nor
pruned through; only the link itself may be removed. A file is read only if it is a regular
file no larger than `MAX_FILE_BYTES` (a FIFO would hang the read, a link to a huge file would
fill the memory). The cache root itself, and the folders above it, may be links: that is the
user's choice of where the cache lives.

The cache is bounded: after a successful load the archives of versions other than the one
loaded and the one before it are removed (`keep_versions`). The current one is what an offline
start needs (`latest.json` names it), the previous one is kept for a process still reading it
or a pointer that goes back a version; parsed tables were already kept only for the CSVs
loaded.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import stat
import time
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

SEAL = b"\n#gpuhunt-sha256:"  # then 64 hex digits: the sha256 of every byte before SEAL
_SEAL_LEN = len(SEAL) + 64
TMP_PREFIX = ".tmp-"
ORPHAN_AGE = 3600.0  # seconds: no live writer takes that long to write a catalog file
# The largest cache file read: an archive is at most GPUHUNT_MAX_DOWNLOAD_MB (256 MiB by
# default), a parsed table of 5M offers ~200 MB; past this it is not ours.
MAX_FILE_BYTES = 1024 * 1024 * 1024
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def cache_root(override: Path | None = None) -> Path:
    if override is not None:
        return override
    import platformdirs  # here: a run with GPUHUNT_CACHE_DIR set never needs it

    return Path(platformdirs.user_cache_dir("gpuhunt"))


def seal(data: bytes) -> bytes:
    return data + SEAL + hashlib.sha256(data).hexdigest().encode()


def unseal(raw: bytes) -> bytes | None:
    """The bytes a sealed file holds, or None if its seal is missing or does not match."""
    if len(raw) < _SEAL_LEN or raw[-_SEAL_LEN:-64] != SEAL:
        return None
    data = raw[:-_SEAL_LEN]
    if hashlib.sha256(data).hexdigest().encode() != raw[-64:]:
        return None
    return data


def _write_atomically(path: Path, data: bytes | list[Any]) -> None:
    """`data` (or its pieces one after another) at `path`, all or nothing for every reader
    (see the module docstring for why it is not synced to the disk)."""
    import tempfile  # here: a warm start reads the cache and writes nothing

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=TMP_PREFIX)
    try:
        with os.fdopen(fd, "wb") as f:
            f.writelines([data] if isinstance(data, (bytes, bytearray)) else data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class DiskCache:
    def __init__(self, base_url: str, root: Path | None = None) -> None:
        key = hashlib.sha256(base_url.encode()).hexdigest()[:16]
        self.dir = cache_root(root) / key

    def _path(self, *parts: str) -> Path:
        for part in parts:
            if not part or "/" in part or "\\" in part or part.startswith("."):
                raise ValueError(f"unsafe cache path part {part!r}")
        return self.dir.joinpath(*parts)

    def _inside(self, folder: Path) -> bool:
        """Whether `folder` (this catalog's folder or one below it) is reached without a
        symbolic link below the catalog's folder (the folder itself may not be one either)."""
        try:
            rel = folder.relative_to(self.dir)
        except ValueError:
            return False
        path = self.dir
        for part in ("", *rel.parts):
            path = path / part if part else path
            try:
                if stat.S_ISLNK(os.lstat(path).st_mode):
                    logger.warning("Not following the link %s in the gpuhunt cache", path)
                    return False
            except FileNotFoundError:
                return True  # nothing further down exists to be a link
            except OSError:
                return False
        return True

    def _open(self, path: Path) -> int | None:
        """A read-only descriptor of `path` if it is a regular file (not a link, FIFO or
        device) of at most `MAX_FILE_BYTES`, else None (with a warning for anything there
        that is not such a file: the caller treats it as a damaged entry, a miss)."""
        if not self._inside(path.parent):
            return None
        try:
            # Its type first: where O_NOFOLLOW or O_NONBLOCK is missing, the open below must
            # still never reach a FIFO (it would wait for a writer forever) or a device.
            if not stat.S_ISREG(os.lstat(path).st_mode):
                logger.warning("Ignoring %s in the gpuhunt cache: not a regular file", path)
                return None
            # The name may have been replaced since: O_NOFOLLOW refuses a link, O_NONBLOCK
            # makes a FIFO put there in between open at once, and fstat says what was opened.
            fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
        except OSError:
            return None
        try:
            info = os.fstat(fd)
        except OSError:
            os.close(fd)
            return None
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            os.close(fd)
            logger.warning(
                "Ignoring %s in the gpuhunt cache: not a regular file of a sane size", path
            )
            return None
        return fd

    def _read(self, path: Path) -> bytes | None:
        """The bytes of `path` if `_open` accepts it; else None."""
        fd = self._open(path)
        if fd is None:
            return None
        with os.fdopen(fd, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
        return data if len(data) <= MAX_FILE_BYTES else None

    def tail(self, size: int, *parts: str) -> bytes | None:
        """The last `size` bytes of a cache file (all of it if shorter), read with `_read`'s
        checks; None if it is absent or not a regular file."""
        try:
            fd = self._open(self._path(*parts))
        except (OSError, ValueError):
            return None
        if fd is None:
            return None
        try:
            with os.fdopen(fd, "rb") as f:
                end = f.seek(0, os.SEEK_END)
                f.seek(max(0, end - size))
                return f.read(size)
        except OSError:
            return None

    def get(self, *parts: str) -> bytes | None:
        try:
            path = self._path(*parts)
            raw = self._read(path)
        except (OSError, ValueError):
            return None
        if raw is None:
            return None
        data = unseal(raw)
        if data is None:
            logger.warning("Discarding the damaged cache file %s", "/".join(parts))
            with contextlib.suppress(OSError):
                path.unlink()
        return data

    def delete(self, *parts: str) -> None:
        """Remove a cache file if it is there (best effort)."""
        with contextlib.suppress(OSError, ValueError):
            path = self._path(*parts)
            if self._inside(path.parent):
                path.unlink(missing_ok=True)

    def exists(self, *parts: str) -> bool:
        try:
            path = self._path(*parts)
            return self._inside(path.parent) and stat.S_ISREG(os.lstat(path).st_mode)
        except (OSError, ValueError):
            return False

    def put(self, data: bytes | list[Any], *parts: str) -> bool:
        """Store `data`, or its pieces one after another (atomically); False if it could not
        be (a read-only or full disk only costs the cache, never the query)."""
        try:
            path = self._path(*parts)
            path.parent.mkdir(parents=True, exist_ok=True)
            if not self._inside(path.parent):
                return False
            self._remove_orphans(path.parent)
            # The seal written after the data, not joined to it: a copy of a table's worth
            # of bytes at a load's peak (issue 40).
            pieces = [data] if isinstance(data, (bytes, bytearray)) else data
            digest = hashlib.sha256()
            for piece in pieces:
                digest.update(piece)
            _write_atomically(path, [*pieces, SEAL + digest.hexdigest().encode()])
            return True
        except (OSError, ValueError) as e:
            logger.debug("Could not write the cache file %s: %s", "/".join(parts), e)
            return False

    @staticmethod
    def _remove_orphans(folder: Path) -> None:
        now = time.time()
        with contextlib.suppress(OSError):
            for entry in folder.iterdir():
                if entry.name.startswith(TMP_PREFIX):
                    with contextlib.suppress(OSError):
                        if now - entry.stat().st_mtime > ORPHAN_AGE:
                            entry.unlink()

    def keep_versions(self, folder: str, names: set[str], recent: int = 1) -> list[str]:
        """Remove the version folders under `folder` (`archive`, or a provider's) but those
        in `names` and the `recent` most recently written others; the names removed."""
        try:
            where = self._path(folder)
            if not self._inside(where):
                return []
            entries = [e for e in where.iterdir() if _is_dir_or_link(e)]
        except (OSError, ValueError):
            return []

        def written(entry: Path) -> float:
            try:
                return max([entry.stat().st_mtime, *(f.stat().st_mtime for f in entry.iterdir())])
            except OSError:
                return 0.0

        others = sorted(
            (e for e in entries if e.name not in names),
            key=lambda e: (written(e), e.name),
            reverse=True,
        )
        removed = []
        for entry in others[max(recent, 0) :]:
            if entry.is_symlink():  # the link goes, never what it points to
                with contextlib.suppress(OSError):
                    entry.unlink()
            else:
                shutil.rmtree(entry, ignore_errors=True)  # does not follow links inside
            removed.append(entry.name)
        return removed

    def remove_orphans(self) -> int:
        """Remove the temporary files older than `ORPHAN_AGE` in every folder of the cache
        (every catalog URL's, not only this one's); how many were removed."""
        root = self.dir.parent
        now = time.time()
        removed = 0
        for folder, dirs, files in os.walk(root):
            if len(Path(folder).relative_to(root).parts) >= 3:
                dirs[:] = []  # the cache is three folders deep at most
            for name in files:
                if not name.startswith(TMP_PREFIX):
                    continue
                path = Path(folder, name)
                with contextlib.suppress(OSError):
                    if now - path.stat().st_mtime > ORPHAN_AGE:
                        path.unlink()
                        removed += 1
        return removed

    def prune(self, folder: str, keep: set[str]) -> None:
        """Delete the files in `folder` not named in `keep` (best effort)."""
        try:
            where = self._path(folder)
            if not self._inside(where):
                return
            entries = list(where.iterdir())
        except (OSError, ValueError):
            return
        for entry in entries:
            if entry.name not in keep and not entry.name.startswith(TMP_PREFIX):
                with contextlib.suppress(OSError):
                    entry.unlink()

    def get_json(self, *parts: str) -> Any:
        data = self.get(*parts)
        if data is None:
            return None
        try:
            return json.loads(data)
        except (ValueError, RecursionError):
            return None

    def put_json(self, value: Any, *parts: str) -> bool:
        return self.put(json.dumps(value).encode(), *parts)


def _is_dir_or_link(entry: Path) -> bool:
    """A version folder, or a link standing where one would (removed as a link)."""
    try:
        mode = os.lstat(entry).st_mode
    except OSError:
        return False
    return stat.S_ISDIR(mode) or stat.S_ISLNK(mode)
