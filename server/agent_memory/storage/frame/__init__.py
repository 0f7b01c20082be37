"""The repository frame both record stores share (as Django's backends share
`BaseDatabaseOperations`): every query whose logic is the same on SQLite and PostgreSQL, written
once over a `Dialect` that each store supplies with the few fragments that differ (placeholders,
booleans, id lists, tags). A store's modules keep only the statements that really differ, and
neither store imports the other."""
