"""Operator work on a store (export, import, stats, audit, warnings, prune, erase, reindex): services
over the storage ports, opened through the composition root (`bootstrap.open_records`). No SQL here."""
