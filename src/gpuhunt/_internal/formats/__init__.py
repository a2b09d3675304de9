"""The catalog file formats (pure): the CSV row by row (`csv`) and into a table (`csv_table`,
`table_builder`), the zip archive with its manifest (`archive`), and column files (`columns`)."""
