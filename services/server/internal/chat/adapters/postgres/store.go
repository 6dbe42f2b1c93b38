// Package postgres is the PostgreSQL adapter of the chat module: the
// tables spaces, space_members, channels, threads and messages (migrations
// 00023 to 00025) behind app.Store, and chat.Memberships for the
// authorizer. Every query runs through pg.Conn, so it joins the unit of
// work of the context.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy/server/internal/chat"
	"bothy/server/internal/chat/app"
	"bothy/server/internal/chat/domain"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/pg"
)

// Store implements app.Store and chat.Memberships.
type Store struct {
	pool *pgxpool.Pool
}

var (
	_ app.Store        = (*Store)(nil)
	_ chat.Memberships = (*Store)(nil)
)

// NewStore returns the store over pool (bothy_app). It panics on a nil
// pool, because that is a wiring bug.
func NewStore(pool *pgxpool.Pool) *Store {
	if pool == nil {
		panic("chat: NewStore needs a pool")
	}
	return &Store{pool: pool}
}

func (s *Store) db(ctx context.Context) pg.DBTX { return pg.Conn(ctx, s.pool) }

// failed wraps a database error as an internal *errs.Error; what names the
// query, never its values.
func failed(what string, err error) error {
	return errs.Wrap(fmt.Errorf("chat: %s: %w", what, err), "chat: database operation failed")
}

// one scans a single row; false for no row.
func one[T any](rows pgx.Rows, err error, scan func(pgx.CollectableRow) (T, error), what string) (T, bool, error) {
	var zero T
	if err != nil {
		return zero, false, failed(what, err)
	}
	v, err := pgx.CollectExactlyOneRow(rows, scan)
	if errors.Is(err, pgx.ErrNoRows) {
		return zero, false, nil
	}
	if err != nil {
		return zero, false, failed(what, err)
	}
	return v, true, nil
}

// all scans every row into a non-nil slice.
func all[T any](rows pgx.Rows, err error, scan func(pgx.CollectableRow) (T, error), what string) ([]T, error) {
	if err != nil {
		return nil, failed(what, err)
	}
	out, err := pgx.CollectRows(rows, scan)
	if err != nil {
		return nil, failed(what, err)
	}
	if out == nil {
		out = []T{}
	}
	return out, nil
}

// InsertSpace implements app.Store.
func (s *Store) InsertSpace(ctx context.Context, sp domain.Space) error {
	_, err := s.db(ctx).Exec(ctx, `INSERT INTO spaces (id, name, created_by, created_at) VALUES ($1, $2, $3, $4)`,
		sp.ID, sp.Name, sp.CreatedBy, sp.CreatedAt)
	if err != nil {
		return failed("insert space", err)
	}
	return nil
}

const spaceColumns = `id, name, created_by, created_at`

func scanSpace(row pgx.CollectableRow) (domain.Space, error) {
	var sp domain.Space
	err := row.Scan(&sp.ID, &sp.Name, &sp.CreatedBy, &sp.CreatedAt)
	sp.CreatedAt = sp.CreatedAt.UTC()
	return sp, err
}

// SpaceByID implements app.Store.
func (s *Store) SpaceByID(ctx context.Context, id ids.ID) (domain.Space, bool, error) {
	rows, err := s.db(ctx).Query(ctx, `SELECT `+spaceColumns+` FROM spaces WHERE id = $1`, id)
	return one(rows, err, scanSpace, "space by id")
}

// Spaces implements app.Store.
func (s *Store) Spaces(ctx context.Context) ([]domain.Space, error) {
	rows, err := s.db(ctx).Query(ctx, `SELECT `+spaceColumns+` FROM spaces ORDER BY name, id`)
	return all(rows, err, scanSpace, "list spaces")
}

// InsertMember implements app.Store.
func (s *Store) InsertMember(ctx context.Context, m domain.Member) error {
	_, err := s.db(ctx).Exec(ctx, `
		INSERT INTO space_members (space_id, principal_id, level, created_at) VALUES ($1, $2, $3, $4)`,
		m.SpaceID, m.PersonID, string(m.Level), m.CreatedAt)
	switch {
	case err == nil:
		return nil
	case pg.IsUniqueViolation(err, "space_members_pkey"):
		return errs.Conflict("already_member")
	case pg.IsForeignKeyViolation(err, "space_members_principal_id_fkey"):
		return errs.Validation(errs.Field("/person_id", domain.CodeNotFound))
	default:
		return failed("insert member", err)
	}
}

// InsertChannel implements app.Store.
func (s *Store) InsertChannel(ctx context.Context, c domain.Channel) error {
	_, err := s.db(ctx).Exec(ctx, `
		INSERT INTO channels (id, space_id, name, created_by, created_at) VALUES ($1, $2, $3, $4, $5)`,
		c.ID, c.SpaceID, c.Name, c.CreatedBy, c.CreatedAt)
	switch {
	case err == nil:
		return nil
	case pg.IsUniqueViolation(err, "channels_space_id_name_key"):
		return errs.Conflict("name_taken")
	default:
		return failed("insert channel", err)
	}
}

const channelColumns = `id, space_id, name, created_by, created_at`

func scanChannel(row pgx.CollectableRow) (domain.Channel, error) {
	var c domain.Channel
	err := row.Scan(&c.ID, &c.SpaceID, &c.Name, &c.CreatedBy, &c.CreatedAt)
	c.CreatedAt = c.CreatedAt.UTC()
	return c, err
}

// ChannelByID implements app.Store.
func (s *Store) ChannelByID(ctx context.Context, id ids.ID) (domain.Channel, bool, error) {
	rows, err := s.db(ctx).Query(ctx, `SELECT `+channelColumns+` FROM channels WHERE id = $1`, id)
	return one(rows, err, scanChannel, "channel by id")
}

// Channels implements app.Store.
func (s *Store) Channels(ctx context.Context, spaceID ids.ID) ([]domain.Channel, error) {
	rows, err := s.db(ctx).Query(ctx, `SELECT `+channelColumns+` FROM channels WHERE space_id = $1 ORDER BY name, id`, spaceID)
	return all(rows, err, scanChannel, "list channels")
}

// ThreadByID implements app.Store.
func (s *Store) ThreadByID(ctx context.Context, id ids.ID) (domain.Thread, bool, error) {
	rows, err := s.db(ctx).Query(ctx, `
		SELECT id, space_id, channel_id, root_message_id, created_by, created_at FROM threads WHERE id = $1`, id)
	return one(rows, err, func(row pgx.CollectableRow) (domain.Thread, error) {
		var t domain.Thread
		err := row.Scan(&t.ID, &t.SpaceID, &t.ChannelID, &t.RootMessageID, &t.CreatedBy, &t.CreatedAt)
		t.CreatedAt = t.CreatedAt.UTC()
		return t, err
	}, "thread by id")
}

// InsertThread implements app.Store.
func (s *Store) InsertThread(ctx context.Context, t domain.Thread) error {
	_, err := s.db(ctx).Exec(ctx, `
		INSERT INTO threads (id, space_id, channel_id, root_message_id, created_by, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, t.ID, t.SpaceID, t.ChannelID, t.RootMessageID, t.CreatedBy, t.CreatedAt)
	if err != nil {
		return failed("insert thread", err)
	}
	return nil
}

// InsertMessage implements app.Store.
func (s *Store) InsertMessage(ctx context.Context, m domain.Message) error {
	_, err := s.db(ctx).Exec(ctx, `
		INSERT INTO messages (id, space_id, channel_id, thread_id, author_id, text, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, m.ID, m.SpaceID, m.ChannelID, m.ThreadID, m.AuthorID, m.Text, m.CreatedAt)
	if err != nil {
		return failed("insert message", err)
	}
	return nil
}

const messageColumns = `id, space_id, channel_id, thread_id, author_id, text, created_at, updated_at, deleted_at`

// scanMessage reads messageColumns; a NULL time becomes the zero
// time.Time ("never").
func scanMessage(row pgx.CollectableRow) (domain.Message, error) {
	var m domain.Message
	var updated, deleted *time.Time
	err := row.Scan(&m.ID, &m.SpaceID, &m.ChannelID, &m.ThreadID, &m.AuthorID, &m.Text, &m.CreatedAt, &updated, &deleted)
	m.CreatedAt = m.CreatedAt.UTC()
	if updated != nil {
		m.UpdatedAt = updated.UTC()
	}
	if deleted != nil {
		m.DeletedAt = deleted.UTC()
	}
	return m, err
}

// LiveMessageForUpdate implements app.Store.
func (s *Store) LiveMessageForUpdate(ctx context.Context, id ids.ID) (domain.Message, bool, error) {
	rows, err := s.db(ctx).Query(ctx, `SELECT `+messageColumns+` FROM messages
		WHERE id = $1 AND deleted_at IS NULL FOR UPDATE`, id)
	return one(rows, err, scanMessage, "message for update")
}

// UpdateMessageText implements app.Store.
func (s *Store) UpdateMessageText(ctx context.Context, id ids.ID, text string, at time.Time) error {
	if _, err := s.db(ctx).Exec(ctx, `UPDATE messages SET text = $2, updated_at = $3 WHERE id = $1`, id, text, at); err != nil {
		return failed("update message", err)
	}
	return nil
}

// MarkMessageDeleted implements app.Store.
func (s *Store) MarkMessageDeleted(ctx context.Context, id ids.ID, at time.Time) error {
	if _, err := s.db(ctx).Exec(ctx, `UPDATE messages SET text = '', deleted_at = $2 WHERE id = $1`, id, at); err != nil {
		return failed("delete message", err)
	}
	return nil
}

// MessagesBefore implements app.Store with the partial index
// messages_channel_page_idx, scanned backwards.
func (s *Store) MessagesBefore(ctx context.Context, channelID ids.ID, before *domain.Position, limit int) ([]domain.Message, error) {
	var rows pgx.Rows
	var err error
	if before == nil {
		rows, err = s.db(ctx).Query(ctx, `SELECT `+messageColumns+` FROM messages
			WHERE channel_id = $1 AND deleted_at IS NULL
			ORDER BY created_at DESC, id DESC LIMIT $2`, channelID, limit)
	} else {
		rows, err = s.db(ctx).Query(ctx, `SELECT `+messageColumns+` FROM messages
			WHERE channel_id = $1 AND deleted_at IS NULL AND (created_at, id) < ($2, $3)
			ORDER BY created_at DESC, id DESC LIMIT $4`, channelID, before.CreatedAt, before.ID, limit)
	}
	return all(rows, err, scanMessage, "list messages")
}

// IsSpaceMember implements chat.Memberships.
func (s *Store) IsSpaceMember(ctx context.Context, spaceID, principalID ids.ID) (bool, error) {
	var member bool
	err := s.db(ctx).QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM space_members WHERE space_id = $1 AND principal_id = $2)`,
		spaceID, principalID).Scan(&member)
	if err != nil {
		return false, failed("is space member", err)
	}
	return member, nil
}

// MembershipsOf implements chat.Memberships with the index
// space_members_principal_idx.
func (s *Store) MembershipsOf(ctx context.Context, principalID ids.ID) ([]chat.Membership, error) {
	rows, err := s.db(ctx).Query(ctx, `SELECT space_id, level FROM space_members WHERE principal_id = $1`, principalID)
	return all(rows, err, func(row pgx.CollectableRow) (chat.Membership, error) {
		var m chat.Membership
		err := row.Scan(&m.SpaceID, &m.Level)
		return m, err
	}, "memberships of")
}
