"""The disk cache of downloaded catalogs (one folder per catalog URL, one file per version).

Files are written atomically (temporary file in the same folder, then `os.replace`), so a crash
or a concurrent writer never leaves a half-written archive where a reader could find it. The
folder is the user cache dir (platformdirs), or the one `Settings.cache_dir` names.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import platformdirs


def cache_root(override: Path | None = None) -> Path:
    return override if override is not None else Path(platformdirs.user_cache_dir("gpuhunt"))


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
            return self._path(*parts).read_bytes()
        except (OSError, ValueError):
            return None

    def put(self, data: bytes, *parts: str) -> None:
        path = self._path(*parts)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.replace(tmp, path)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError:
            pass  # a read-only or full disk only costs the cache, never the query

    def prune(self, folder: str, keep: set[str]) -> None:
        """Delete the files in `folder` not named in `keep` (best effort)."""
        try:
            entries = list(self._path(folder).iterdir())
        except (OSError, ValueError):
            return
        for entry in entries:
            if entry.name not in keep and not entry.name.startswith(".tmp-"):
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

    def put_json(self, value: Any, *parts: str) -> None:
        self.put(json.dumps(value).encode(), *parts)
