import sys

from agent_memory.cli import main

sys.exit(main())
