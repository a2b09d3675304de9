"""Getting data in (I/O): settings from the environment, HTTP (`transport`, `livecache`), the disk
cache, where a published catalog comes from (`sources`) and its providers' tables (`tables`)."""
