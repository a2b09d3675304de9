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
import tempfile
import time
from pathlib import Path
from typing import Any

import platformdirs

logger = logging.getLogger(__name__)

SEAL = b"\n#gpuhunt-sha256:"  # then 64 hex digits: the sha256 of every byte before SEAL
_SEAL_LEN = len(SEAL) + 64
TMP_PREFIX = ".tmp-"
ORPHAN_AGE = 3600.0  # seconds: no live writer takes that long to write a catalog file


def cache_root(override: Path | None = None) -> Path:
    return override if override is not None else Path(platformdirs.user_cache_dir("gpuhunt"))


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


def _write_atomically(path: Path, data: bytes) -> None:
    """`data` at `path`, all or nothing for every reader (see the module docstring for why it
    is not synced to the disk)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=TMP_PREFIX)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
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

    def get(self, *parts: str) -> bytes | None:
        try:
            path = self._path(*parts)
            raw = path.read_bytes()
        except (OSError, ValueError):
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
            self._path(*parts).unlink(missing_ok=True)

    def exists(self, *parts: str) -> bool:
        try:
            return self._path(*parts).is_file()
        except ValueError:
            return False

    def put(self, data: bytes, *parts: str) -> bool:
        """Store `data` (atomically); False if it could not be (a read-only or full disk only
        costs the cache, never the query)."""
        try:
            path = self._path(*parts)
            path.parent.mkdir(parents=True, exist_ok=True)
            self._remove_orphans(path.parent)
            _write_atomically(path, seal(data))
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
            entries = [e for e in self._path(folder).iterdir() if e.is_dir()]
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
            shutil.rmtree(entry, ignore_errors=True)
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
            entries = list(self._path(folder).iterdir())
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
