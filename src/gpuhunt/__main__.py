import sys

from gpuhunt._internal.cli import main

sys.exit(main())
