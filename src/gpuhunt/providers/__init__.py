"""Provider implementations, one module each; see `gpuhunt._internal.registry` for the list."""
