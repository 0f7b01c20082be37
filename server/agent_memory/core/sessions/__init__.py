"""Sessions and reflection (memory_reflect): turns logged and compacted into summaries, and
facts and rules distilled from them and consolidated with what an agent already holds."""
