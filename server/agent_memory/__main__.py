import sys

from agent_memory.launcher import main

sys.exit(main())
