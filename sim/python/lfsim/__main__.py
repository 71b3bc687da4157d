import sys

from lfsim.cli import main

sys.exit(main())
