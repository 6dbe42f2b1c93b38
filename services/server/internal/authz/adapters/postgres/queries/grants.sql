-- Grants (migrations 00030, 00045). The authorizer reads every grant of a
-- principal at once through the leading column of
-- grants_subject_place_key; the delivery router reads the holders of a
-- place through grants_place_idx.

-- name: GrantInsert :exec
INSERT INTO grants (id, subject_principal_id, level, space_id, channel_id, created_by, created_at)
VALUES (@id, @subject_principal_id, @level, @space_id, @channel_id, @created_by, @created_at);

-- name: GrantDelete :execrows
DELETE FROM grants WHERE id = @id AND subject_principal_id = @subject_principal_id;

-- name: GrantListBySubject :many
SELECT * FROM grants WHERE subject_principal_id = @subject_principal_id ORDER BY created_at, id;

-- name: GrantFactsBySubjects :many
SELECT subject_principal_id, space_id, channel_id, level FROM grants
WHERE subject_principal_id = ANY(@subject_principal_ids::uuid[]);

-- name: GrantHoldersByPlaces :many
-- For each place (space_ids[i] with channel_ids[i], NULL for a space-wide
-- place), the subjects of the grants on the space (channel NULL) or on the
-- space and the channel: a space-wide grant covers every channel of its
-- space. place is the place's 1-based index; one read of grants_place_idx
-- per place (OFFSET 0 keeps each read apart under every plan, as in
-- D-SQ-15). Then, as rows of place 0, every grant of every subject found,
-- once each, through the leading column of grants_subject_place_key: the
-- facts the router decides with, so they need no read of their own
-- (D-M2-26-81). space_id, channel_id and level are NULL in the rows of a
-- place.
WITH holders AS (
    SELECT p.place::int AS place, h.subject_principal_id
    FROM (SELECT unnest(@space_ids::uuid[]) AS space_id, unnest(@channel_ids::uuid[]) AS channel_id,
                 generate_subscripts(@space_ids::uuid[], 1) AS place) AS p
    CROSS JOIN LATERAL (
        SELECT DISTINCT g.subject_principal_id FROM grants g
        WHERE g.space_id = p.space_id AND (p.channel_id IS NULL OR g.channel_id IS NULL OR g.channel_id = p.channel_id)
        OFFSET 0
    ) h
)
SELECT holders.place, holders.subject_principal_id,
       NULL::uuid AS space_id, NULL::uuid AS channel_id, NULL::text AS level
FROM holders
UNION ALL
SELECT 0, g.subject_principal_id, g.space_id, g.channel_id, g.level
FROM grants g
WHERE g.subject_principal_id IN (SELECT DISTINCT holders.subject_principal_id FROM holders)
ORDER BY 1, 2;
