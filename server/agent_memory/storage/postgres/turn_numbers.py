"""Turn numbers: the storage positions reflection marks count in, on PostgreSQL.

On SQLite one writer at a time commits, so `rowid` order is commit order and a reflection mark
("every turn up to rowid N is distilled") never passes over a turn that commits later. On
PostgreSQL `entries.seq` comes from an identity column, taken when a row is inserted, not when it
commits: with several servers (or several requests of one server) writing one session at once, turn
seq 10 can commit after turn seq 11, after a reflection already moved the mark to 11; reflecting
"after 11" would then skip turn 10 for ever. Timestamps have the same flaw (and several clocks).

So each session turn gets a number of its own, `entries.turn_seq`, from a per-session counter row
(`session_turn_counters`) that a trigger increments when a turn is inserted or rewritten (a new
`updated_at`: an edited turn counts as new, as on SQLite). The increment holds that counter row's
lock until the writing transaction ends, so two transactions writing turns of one session take
their numbers one after the other, each after the previous one committed (or rolled back, which
gives its number back): committed turn numbers of a session appear in commit order, without gaps.
A reflection that has seen every turn up to number N can therefore never miss a turn numbered
below N that commits later: there is none. The cost is that writers of the same session wait for
each other's commit (different sessions never do); numbers never go back, so a deleted newest turn
does not make its number reused either.
"""

from __future__ import annotations

import psycopg

# A session turn, as `SqliteSessionStore` counts them (`conflict` is left to the readers: a
# conflict entry's number is never read, and counting it costs nothing).
TURN_ROW = ("{t}session_id IS NOT NULL AND {t}team IS NOT NULL AND {t}scope = 'agent' "
            "AND {t}layer = 'session' AND {t}source <> 'reflection'")


def m008_turn_numbers(conn: psycopg.Connection) -> None:
    conn.execute(
        """
        CREATE TABLE session_turn_counters (
            namespace TEXT COLLATE "C" NOT NULL,
            team TEXT COLLATE "C" NOT NULL,
            session_id TEXT COLLATE "C" NOT NULL,
            last_turn BIGINT NOT NULL,
            PRIMARY KEY (namespace, team, session_id)
        )
        """
    )
    conn.execute("ALTER TABLE entries ADD COLUMN turn_seq BIGINT")
    # Existing turns are numbered in storage order, and existing marks (a seq until now) become
    # the number of the last turn at or before that seq.
    conn.execute(
        "UPDATE entries e SET turn_seq = n.turn FROM (SELECT seq, ROW_NUMBER() OVER "
        "(PARTITION BY namespace, team, session_id ORDER BY seq) AS turn FROM entries "
        f"WHERE {TURN_ROW.format(t='')}) n WHERE e.seq = n.seq")
    conn.execute(
        "INSERT INTO session_turn_counters (namespace, team, session_id, last_turn) "
        "SELECT namespace, team, session_id, MAX(turn_seq) FROM entries WHERE turn_seq IS NOT NULL GROUP BY 1, 2, 3")
    conn.execute("ALTER TABLE reflection_marks RENAME COLUMN last_seq TO last_turn")
    conn.execute(
        "UPDATE reflection_marks m SET last_turn = COALESCE((SELECT MAX(e.turn_seq) FROM entries e "
        "WHERE e.namespace = m.namespace AND e.team = m.team AND e.session_id = m.session_id "
        "AND e.seq <= m.last_turn), 0)")
    conn.execute(
        "CREATE FUNCTION entries_turn_seq() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        f"IF {TURN_ROW.format(t='NEW.')} AND (TG_OP = 'INSERT' OR NEW.turn_seq IS NULL "
        "OR NEW.updated_at IS DISTINCT FROM OLD.updated_at) THEN "
        "INSERT INTO session_turn_counters AS c (namespace, team, session_id, last_turn) "
        "VALUES (NEW.namespace, NEW.team, NEW.session_id, 1) "
        "ON CONFLICT (namespace, team, session_id) DO UPDATE SET last_turn = c.last_turn + 1 "
        "RETURNING c.last_turn INTO NEW.turn_seq; "
        "END IF; RETURN NEW; END $$"
    )
    conn.execute("CREATE TRIGGER entries_turn_seq BEFORE INSERT OR UPDATE ON entries "
                 "FOR EACH ROW EXECUTE FUNCTION entries_turn_seq()")
    conn.execute("CREATE INDEX entries_by_turn ON entries (namespace, session_id, turn_seq) "
                 "WHERE turn_seq IS NOT NULL")
