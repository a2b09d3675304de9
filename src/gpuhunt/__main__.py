from gpuhunt._internal.cli import run

run()
