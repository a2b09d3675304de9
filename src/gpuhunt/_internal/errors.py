"""One error tree for the whole package: catch `GPUHuntError` to catch everything we raise."""


class GPUHuntError(Exception):
    """Base of every error gpuhunt raises on purpose."""


class ProviderError(GPUHuntError):
    """A provider could not be queried or its answer could not be understood."""


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


class CatalogDownloadError(CatalogError):
    """Fetching a catalog object failed (network, HTTP status, timeout)."""


class CatalogIntegrityError(CatalogError):
    """A catalog archive is corrupt, does not match its manifest, or is unsafe to open."""


class InputError(GPUHuntError, ValueError):
    """What the caller asked for cannot be meant as given: an unknown name, a value that cannot
    be read, a credential that the named provider needs and is not set. The CLI exits with 2
    for it (and 1 for every other failure, which is not the user's to fix)."""


class UnknownProviderError(InputError):
    """A provider name that the registry does not know.

    Also a `ValueError`, which is what gpuhunt 0.1.x raised for an unknown provider.
    """


class PipelineError(GPUHuntError):
    """A build, publish or verify step failed; nothing was made the latest version."""


class PipelineInputError(PipelineError, InputError):
    """A build, publish or verify step was given an argument it cannot use."""


class UnknownCatalogError(CatalogError, InputError):
    """A catalog named (to compare, to read history from) that is no folder, file, URL or
    version."""
