"""Price history and catalog diffs: `table` (the history format and its update, pure), `diff`
(two catalogs compared, pure), `remote` (fetching and verifying published history), `api`
(what `gpuhunt.diff` and `Catalog.history` call: the catalogs to compare, the history asked
for), `plot` (matplotlib, optional) and `commands` (`gpuhunt history`, `gpuhunt catalog diff`)."""
