"""The vocabulary every part of the domain shares: the models, ids, time, errors, the limits
and checks every entry meets, audit events, typed calls, cursors and counters."""
