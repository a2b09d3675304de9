"""The nightly pipeline: pack collected CSVs into a catalog version (`build`, pure; `files` and
`integrity` for its I/O), upload it (`s3`), check what was published (`verify`), and the
`gpuhunt catalog build|publish|verify` commands (`commands`)."""
