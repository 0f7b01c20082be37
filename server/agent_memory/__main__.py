import sys

from agent_memory.cli.launcher import main

sys.exit(main())
