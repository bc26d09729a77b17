-- A lineage question's notified_at is now when its owners had it: at once
-- by inbox alone, else at its last webhook's 2xx (stamped by the flags'
-- deliveries, flags/store.rs `delivered`), NULL until then. Questions
-- asked before were stamped when asked; they are brought in line, as the
-- pilot read them (the latest of the two, NULL while one is undelivered).
UPDATE lineage_questions q
   SET notified_at = CASE
           WHEN EXISTS (SELECT 1 FROM deliveries d
                         WHERE d.lineage_question_id = q.id AND d.delivered_at IS NULL) THEN NULL
           ELSE GREATEST(q.notified_at, (SELECT max(d.delivered_at) FROM deliveries d
                                          WHERE d.lineage_question_id = q.id))
       END
 WHERE EXISTS (SELECT 1 FROM deliveries d WHERE d.lineage_question_id = q.id);
