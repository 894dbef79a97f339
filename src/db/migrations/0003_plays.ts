import { sql, type Kysely } from 'kysely';

// Statements run one by one rather than through executeStatements: the trigger body holds `;` at line ends.
const statements = [
  // Counting a million candidates on every page read costs tens of milliseconds; a per-Play counter kept by
  // statement-level triggers costs one aggregate per write statement and stays exact whoever writes
  // (API, world loader, engine, fixtures). No foreign key to plays, so deleting a Play is never blocked by it.
  `CREATE TABLE play_candidate_counts (
    workspace_id uuid NOT NULL,
    play_id uuid NOT NULL,
    total bigint NOT NULL DEFAULT 0,
    good_fit bigint NOT NULL DEFAULT 0,
    not_a_good_fit bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace_id, play_id)
  )`,
  `CREATE FUNCTION play_candidate_counts_apply() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      INSERT INTO play_candidate_counts AS c (workspace_id, play_id, total, good_fit, not_a_good_fit)
        SELECT workspace_id, play_id, count(*),
               count(*) FILTER (WHERE review_decision = 'good_fit'), count(*) FILTER (WHERE review_decision = 'not_a_good_fit')
        FROM new_rows GROUP BY workspace_id, play_id
      ON CONFLICT (workspace_id, play_id) DO UPDATE
        SET total = c.total + excluded.total, good_fit = c.good_fit + excluded.good_fit, not_a_good_fit = c.not_a_good_fit + excluded.not_a_good_fit;
    ELSIF TG_OP = 'DELETE' THEN
      UPDATE play_candidate_counts c
        SET total = c.total - d.total, good_fit = c.good_fit - d.good_fit, not_a_good_fit = c.not_a_good_fit - d.not_a_good_fit
        FROM (SELECT workspace_id, play_id, count(*) AS total,
                     count(*) FILTER (WHERE review_decision = 'good_fit') AS good_fit,
                     count(*) FILTER (WHERE review_decision = 'not_a_good_fit') AS not_a_good_fit
              FROM old_rows GROUP BY workspace_id, play_id) d
        WHERE c.workspace_id = d.workspace_id AND c.play_id = d.play_id;
    ELSE
      -- Groups whose deltas are all zero (a name or status edit) are skipped so they never lock the counter row.
      INSERT INTO play_candidate_counts AS c (workspace_id, play_id, total, good_fit, not_a_good_fit)
        SELECT workspace_id, play_id, sum(t), sum(g), sum(n)
        FROM (SELECT workspace_id, play_id, 1 AS t,
                     (review_decision IS NOT DISTINCT FROM 'good_fit')::int AS g, (review_decision IS NOT DISTINCT FROM 'not_a_good_fit')::int AS n
              FROM new_rows
              UNION ALL
              SELECT workspace_id, play_id, -1,
                     -(review_decision IS NOT DISTINCT FROM 'good_fit')::int, -(review_decision IS NOT DISTINCT FROM 'not_a_good_fit')::int
              FROM old_rows) x
        GROUP BY workspace_id, play_id
        HAVING sum(t) <> 0 OR sum(g) <> 0 OR sum(n) <> 0
      ON CONFLICT (workspace_id, play_id) DO UPDATE
        SET total = c.total + excluded.total, good_fit = c.good_fit + excluded.good_fit, not_a_good_fit = c.not_a_good_fit + excluded.not_a_good_fit;
    END IF;
    RETURN NULL;
  END
  $fn$`,
  `CREATE TRIGGER candidates_count_insert AFTER INSERT ON candidates
     REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION play_candidate_counts_apply()`,
  `CREATE TRIGGER candidates_count_update AFTER UPDATE ON candidates
     REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION play_candidate_counts_apply()`,
  `CREATE TRIGGER candidates_count_delete AFTER DELETE ON candidates
     REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION play_candidate_counts_apply()`,
  `CREATE FUNCTION play_candidate_counts_reset() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    DELETE FROM play_candidate_counts;
    RETURN NULL;
  END
  $fn$`,
  `CREATE TRIGGER candidates_count_truncate AFTER TRUNCATE ON candidates FOR EACH STATEMENT EXECUTE FUNCTION play_candidate_counts_reset()`,
  `INSERT INTO play_candidate_counts (workspace_id, play_id, total, good_fit, not_a_good_fit)
     SELECT workspace_id, play_id, count(*), count(*) FILTER (WHERE review_decision = 'good_fit'), count(*) FILTER (WHERE review_decision = 'not_a_good_fit')
     FROM candidates GROUP BY workspace_id, play_id`,
  // One partial index per filter replaces (workspace_id, play_id, review_decision, id). `review_decision IS NULL`
  // gives the planner no equality, so that index could not serve ORDER BY id for the unreviewed filter (it sorted
  // every unreviewed row). Each candidate now has an entry in exactly one of the three, and a review moves it into
  // a small index that stays in cache instead of a copy of the whole table.
  `DROP INDEX candidates_page_by_review`,
  `CREATE INDEX candidates_page_unreviewed ON candidates (workspace_id, play_id, id) WHERE review_decision IS NULL`,
  `CREATE INDEX candidates_page_good_fit ON candidates (workspace_id, play_id, id) WHERE review_decision = 'good_fit'`,
  `CREATE INDEX candidates_page_not_a_good_fit ON candidates (workspace_id, play_id, id) WHERE review_decision = 'not_a_good_fit'`,
  // Lookup by handle lists the workspace's leads for an identity no candidate has resolved yet.
  `CREATE INDEX leads_x_username ON leads (workspace_id, lower(username)) WHERE username IS NOT NULL`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
