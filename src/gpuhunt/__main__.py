from gpuhunt._internal.cli import run

# Only when run (`python -m gpuhunt`): a tool that imports every module (the docs' API
# reference reads the package by importing it) must not start the CLI.
if __name__ == "__main__":
    run()
