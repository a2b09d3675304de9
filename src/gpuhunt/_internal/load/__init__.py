"""Getting data in (I/O): settings from the environment, HTTP (`transport`, `livecache`), the disk
cache, downloading a published catalog (`fetch`), the sources that need no network (`sources`)
and each provider's table (`tables`)."""
