"""One error tree for the whole package: catch `GPUHuntError` to catch everything we raise.

Every exception class of `gpuhunt._internal` is defined here; the modules that raised them
before re-export them under their old names (`history.remote.HistoryUnavailable`, ...).
Two kinds stay outside on purpose:
- `load.transport.RedirectRefused`, which must be a `requests.RequestException` for requests'
  redirect handling to pass it up untouched (this module imports nothing but the standard
  library, so that `import gpuhunt` need not import requests); it never leaves the transport
  and `load.fetch`, which turn it into `ProviderError` / `CatalogDownloadError`.
- a provider's private parse exception (for example `providers.azure`'s), raised and caught
  within its module and never seen by a caller.

Errors about an HTTP exchange (`ProviderError`, `CatalogDownloadError`) carry it as
`.request` and `.response` (the `requests` objects, as httpx's errors carry its own), or None
where there was none (a timeout has a request and no response; a local file has neither).
"""

import re
from typing import Any

# A URL's user info (`user:password@`) and its query string (signatures, keys), wherever a URL
# appears in a text; what is left names the host and the path, enough to say what failed.
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@'\"<>]*@")
_QUERY = re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^\s'\"<>?#]*)\?[^\s'\"<>)]*")


def redact(text: object) -> str:
    """`text` with every URL's credentials taken out: the one function every message, log
    record, status field and CLI error that may hold a URL goes through
    (`https://user:secret@host/v3/version?X-Amz-Signature=...` becomes
    `https://host/v3/version?<redacted>`)."""
    shown = str(text)
    if "://" not in shown:
        return shown
    return _QUERY.sub(r"\1?<redacted>", _USERINFO.sub(r"\1", shown))


class GPUHuntError(Exception):
    """Base of every error gpuhunt raises on purpose."""


class _HTTPExchange:
    """`.request` and `.response` of the HTTP exchange an error is about (None if none)."""

    request: Any
    response: Any

    def _keep(self, request: Any, response: Any) -> None:
        if request is None and response is not None:
            request = getattr(response, "request", None)
        self.request = request
        self.response = response


class ProviderError(GPUHuntError, _HTTPExchange):
    """A provider could not be queried or its answer could not be understood."""

    def __init__(self, *args: object, request: Any = None, response: Any = None) -> None:
        super().__init__(*args)
        self._keep(request, response)


class MissingCredsError(ProviderError):
    """A provider's credential is not configured.

    `default_catalog()` skips online providers that raise this from `from_env()`,
    so the message must name the environment variable to set.
    """


class OnlineProvidersFailedError(ProviderError):
    """A query named its providers, all of them online, and none answered.

    `errors` maps each provider to why it did not answer (its exception, a timeout, the backoff
    after an earlier failure, or not being added to the catalog). When some named provider
    answered, the query returns those offers and `status().online_errors` tells the rest.
    """

    def __init__(self, errors: dict[str, str]) -> None:
        self.errors = dict(errors)
        reasons = "; ".join(f"{name}: {why}" for name, why in sorted(self.errors.items()))
        super().__init__(f"No provider asked for answered ({reasons})")


class CatalogError(GPUHuntError):
    """The published catalog could not be loaded."""


class CatalogDownloadError(CatalogError, _HTTPExchange):
    """Fetching a catalog object failed (network, HTTP status, timeout)."""

    def __init__(self, *args: object, request: Any = None, response: Any = None) -> None:
        super().__init__(*args)
        self._keep(request, response)


class DownloadStopped(CatalogDownloadError):
    """A download `Catalog.close()` stopped: no failure of the server (no backoff follows)."""


class NotFound(CatalogDownloadError):
    """A catalog object that is not there (HTTP 403/404, or no such file)."""


class Unchanged(Exception):  # noqa: N818 - a signal between fetch and loader, never raised out
    """The latest published version is the one already loaded."""


class HistoryUnavailable(CatalogError):
    """The catalog has no price history (built before history was kept, or plain CSVs)."""


class HistoryUnreadable(CatalogError):
    """The previous catalog lists a price history that cannot be read (`previous_history`)."""


class CatalogIntegrityError(CatalogError):
    """A catalog archive is corrupt, does not match its manifest, or is unsafe to open."""


class InputError(GPUHuntError, ValueError):
    """What the caller asked for cannot be meant as given: an unknown name, a value that cannot
    be read, a credential that the named provider needs and is not set. The CLI exits with 2
    for it (and 1 for every other failure, which is not the user's to fix)."""


class QueryInputError(InputError):
    """A query argument that cannot be meant as given, naming the filter (`field`, a name of
    the query spec; None when it names none). Each door renders it in its own words:
    `text(label)` is the message with every filter it mentions spelled by `label(name)` (the
    CLI's `--min-cpu`, the HTTP parameter `min_cpu`); `str()` spells them as keywords.
    `online`: the provider is asked live only, which the command line offers (`--online`) and
    a server does not; `note` says more about that."""

    def __init__(
        self,
        field: str | None,
        template: str,
        *,
        named: tuple[str, ...] = (),
        online: bool = False,
        note: str = "",
    ) -> None:
        self.field = field
        self.template = template  # `{name}` where it names a filter; other braces doubled
        self.named = named  # the filters it names, in order
        self.online = online
        self.note = note
        super().__init__(self.text(str))

    def text(self, label: Any) -> str:
        return self.template.format_map({n: label(n) for n in self.named})


class UsageError(InputError):
    """Command-line input that cannot be meant as given; printed as one line, exit status 2."""


class UnknownProviderError(InputError):
    """A provider name that the registry does not know.

    Also a `ValueError`, which is what gpuhunt 0.1.x raised for an unknown provider.
    `suggestions`: the registry names that look most like it ("lambda" -> "lambdalabs").
    """

    suggestions: tuple[str, ...] = ()


class UnknownGPUError(InputError):
    """`gpu_spec(name, strict=True)`: no published figures for `name` - a name the tables do
    not know, or a known GPU without a figure here (`reason` says which). `suggestions`: the
    spec table's models that look most like the name, best first."""

    def __init__(self, message: str, *, name: str, reason: str, suggestions: list[str]) -> None:
        super().__init__(message)
        self.name = name
        self.reason = reason
        self.suggestions = list(suggestions)


class AmbiguousGPUError(InputError):
    """`gpu_spec(name, strict=True)`: several rows fit `name` with different figures (an "H100"
    is SXM or PCIe); `candidates` holds them (`GpuSpec`s) and the message names each spelling
    that picks one."""

    def __init__(self, message: str, *, name: str, candidates: list[Any]) -> None:
        super().__init__(message)
        self.name = name
        self.candidates = list(candidates)


class PipelineError(GPUHuntError):
    """A build, publish or verify step failed; nothing was made the latest version."""


class PipelineInputError(PipelineError, InputError):
    """A build, publish or verify step was given an argument it cannot use."""


class UnknownCatalogError(CatalogError, InputError):
    """A catalog named (to compare, to read history from) that is no folder, file, URL or
    version."""


class MissingColumns(ValueError):  # noqa: N818 - the name callers already catch
    """A CSV whose header lacks required columns (or has no header): refused as a whole, so
    the provider keeps the offers it had rather than get an empty table."""


class BrokenAnswer(Exception):  # noqa: N818 - the name `status().online_errors` shows
    """An online provider's answer broke off midway: none of it is used."""
