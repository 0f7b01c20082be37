"""Recall (memory_retrieve): the plan, the keyword and semantic candidates, ranking, and the
budgeted, compressed context block."""
