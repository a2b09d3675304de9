"""Price history and catalog diffs: `table` (the history format and its update, pure), `diff`
(two catalogs compared, pure), `remote` (fetching history and catalogs to compare), `plot`
(matplotlib, optional) and `commands` (`gpuhunt history`, `gpuhunt catalog diff`)."""
