"""The nightly pipeline: pack the collected provider CSVs into one versioned catalog, publish it
to S3, and check what was published (docs/pipeline.md says the same for humans).

    gpuhunt catalog build --input csvs/ --previous URL_OR_DIR --version 20261129-1 --output out/
    gpuhunt catalog publish out/ --bucket B --prefix v3
    gpuhunt catalog verify https://B.s3.amazonaws.com/v3

- `build`: which CSV each provider publishes, and the objects of both layouts (pure);
  `files` reads the collected CSVs and the previous catalog and writes the build folder;
  `integrity` runs `integrity_tests/test_<provider>.py` on a fresh CSV in a subprocess (a
  provider without one fails the gate: unverified data is not published).
- `s3`: uploads every version object, checks each one in the bucket (HEAD size, then a
  re-download compared by sha256), and only then writes the `version` pointers: per provider
  first, the archive's `{base}/version` last. An interrupted publish leaves the previous
  version in force; running it again skips objects already uploaded intact and finishes. An
  object already in the bucket with different content is an error (unless `--overwrite`).
- `verify`: downloads a published version through the loader's own code (`load.fetch`) and
  checks it against its manifest: every CSV's sha256 and row count, each column file against
  its CSV, the per-provider layout's copies and, for the latest version, that every pointer
  names it.
- `gate`: the plausibility gate (soft limits, which agreeing collections override, and hard
  limits, which only an operator does); `accept`: the committed accept file.
- `report`: the per-provider summary (fresh, carried over, stale beyond the registry limit),
  written to the job summary and posted to the alert webhook (`catalog report`).
- `commands`: the argparse side.
"""
