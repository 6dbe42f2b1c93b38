// Package postgres is the PostgreSQL adapter of the chat module: the
// tables spaces, space_members, channels, threads and messages (migrations
// 00023 to 00025) behind app.Store, and chat.Memberships for the
// authorizer. Queries are sqlc code (queries/*.sql, generated into db/,
// ADR 0078); every query runs through pg.Conn, so it joins the unit of
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
	"bothy/server/internal/chat/adapters/postgres/db"
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

// q returns the sqlc queries on the ambient unit of work of ctx, or on the
// pool.
func (s *Store) q(ctx context.Context) *db.Queries { return db.New(pg.Conn(ctx, s.pool)) }

// failed wraps a database error as an internal *errs.Error; what names the
// query, never its values.
func failed(what string, err error) error {
	return errs.Wrap(fmt.Errorf("chat: %s: %w", what, err), "chat: database operation failed")
}

// one converts the result of a :one query with conv; false for no row.
func one[R, T any](row R, err error, conv func(R) T, what string) (T, bool, error) {
	var zero T
	if errors.Is(err, pgx.ErrNoRows) {
		return zero, false, nil
	}
	if err != nil {
		return zero, false, failed(what, err)
	}
	return conv(row), true, nil
}

// all converts the rows of a :many query with conv into a non-nil slice.
func all[R, T any](rows []R, err error, conv func(R) T, what string) ([]T, error) {
	if err != nil {
		return nil, failed(what, err)
	}
	out := make([]T, 0, len(rows))
	for _, r := range rows {
		out = append(out, conv(r))
	}
	return out, nil
}

// InsertSpace implements app.Store.
func (s *Store) InsertSpace(ctx context.Context, sp domain.Space) error {
	err := s.q(ctx).SpaceInsert(ctx, db.SpaceInsertParams{ID: sp.ID, Name: sp.Name, CreatedBy: sp.CreatedBy, CreatedAt: sp.CreatedAt})
	if err != nil {
		return failed("insert space", err)
	}
	return nil
}

func spaceOf(r db.Space) domain.Space {
	return domain.Space{ID: r.ID, Name: r.Name, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt.UTC()}
}

// SpaceByID implements app.Store.
func (s *Store) SpaceByID(ctx context.Context, id ids.ID) (domain.Space, bool, error) {
	row, err := s.q(ctx).SpaceGetByID(ctx, id)
	return one(row, err, spaceOf, "space by id")
}

// Spaces implements app.Store.
func (s *Store) Spaces(ctx context.Context) ([]domain.Space, error) {
	rows, err := s.q(ctx).SpaceList(ctx)
	return all(rows, err, spaceOf, "list spaces")
}

// InsertMember implements app.Store.
func (s *Store) InsertMember(ctx context.Context, m domain.Member) error {
	err := s.q(ctx).SpaceMemberInsert(ctx, db.SpaceMemberInsertParams{
		SpaceID: m.SpaceID, PrincipalID: m.PersonID, Level: string(m.Level), CreatedAt: m.CreatedAt,
	})
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
	err := s.q(ctx).ChannelInsert(ctx, db.ChannelInsertParams{
		ID: c.ID, SpaceID: c.SpaceID, Name: c.Name, CreatedBy: c.CreatedBy, CreatedAt: c.CreatedAt,
	})
	switch {
	case err == nil:
		return nil
	case pg.IsUniqueViolation(err, "channels_space_id_name_key"):
		return errs.Conflict("name_taken")
	default:
		return failed("insert channel", err)
	}
}

func channelOf(r db.Channel) domain.Channel {
	return domain.Channel{ID: r.ID, SpaceID: r.SpaceID, Name: r.Name, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt.UTC()}
}

// ChannelsByIDs implements app.Store with one statement.
func (s *Store) ChannelsByIDs(ctx context.Context, channelIDs []ids.ID) ([]domain.Channel, error) {
	rows, err := s.q(ctx).ChannelListByIDs(ctx, channelIDs)
	return all(rows, err, channelOf, "channels by ids")
}

// Channels implements app.Store.
func (s *Store) Channels(ctx context.Context, spaceID ids.ID) ([]domain.Channel, error) {
	rows, err := s.q(ctx).ChannelListBySpace(ctx, spaceID)
	return all(rows, err, channelOf, "list channels")
}

// ThreadByID implements app.Store.
func (s *Store) ThreadByID(ctx context.Context, id ids.ID) (domain.Thread, bool, error) {
	row, err := s.q(ctx).ThreadGetByID(ctx, id)
	return one(row, err, func(r db.Thread) domain.Thread {
		return domain.Thread{ID: r.ID, SpaceID: r.SpaceID, ChannelID: r.ChannelID, RootMessageID: r.RootMessageID,
			CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt.UTC()}
	}, "thread by id")
}

// InsertThread implements app.Store.
func (s *Store) InsertThread(ctx context.Context, t domain.Thread) error {
	err := s.q(ctx).ThreadInsert(ctx, db.ThreadInsertParams{
		ID: t.ID, SpaceID: t.SpaceID, ChannelID: t.ChannelID, RootMessageID: t.RootMessageID, CreatedBy: t.CreatedBy, CreatedAt: t.CreatedAt,
	})
	if err != nil {
		return failed("insert thread", err)
	}
	return nil
}

// InsertMessages implements app.Store with one statement.
func (s *Store) InsertMessages(ctx context.Context, ms []domain.Message) error {
	p := db.MessageInsertParams{
		Ids: make([]ids.ID, len(ms)), SpaceIds: make([]ids.ID, len(ms)), ChannelIds: make([]ids.ID, len(ms)),
		ThreadIds: make([]ids.ID, len(ms)), AuthorIds: make([]ids.ID, len(ms)), Texts: make([]string, len(ms)),
		CreatedAts: make([]time.Time, len(ms)),
	}
	for i, m := range ms {
		p.Ids[i], p.SpaceIds[i], p.ChannelIds[i], p.ThreadIds[i] = m.ID, m.SpaceID, m.ChannelID, m.ThreadID
		p.AuthorIds[i], p.Texts[i], p.CreatedAts[i] = m.AuthorID, m.Text, m.CreatedAt
	}
	if err := s.q(ctx).MessageInsert(ctx, p); err != nil {
		return failed("insert messages", err)
	}
	return nil
}

// messageOf maps a row; a NULL time becomes the zero time.Time ("never").
func messageOf(r db.Message) domain.Message {
	m := domain.Message{ID: r.ID, SpaceID: r.SpaceID, ChannelID: r.ChannelID, ThreadID: r.ThreadID, AuthorID: r.AuthorID,
		Text: r.Text, CreatedAt: r.CreatedAt.UTC()}
	if r.UpdatedAt != nil {
		m.UpdatedAt = r.UpdatedAt.UTC()
	}
	if r.DeletedAt != nil {
		m.DeletedAt = r.DeletedAt.UTC()
	}
	return m
}

// LiveMessageForUpdate implements app.Store.
func (s *Store) LiveMessageForUpdate(ctx context.Context, id ids.ID) (domain.Message, bool, error) {
	row, err := s.q(ctx).MessageLockLiveByID(ctx, id)
	return one(row, err, messageOf, "message for update")
}

// UpdateMessageText implements app.Store.
func (s *Store) UpdateMessageText(ctx context.Context, id ids.ID, text string, at time.Time) error {
	if err := s.q(ctx).MessageUpdateText(ctx, db.MessageUpdateTextParams{ID: id, Text: text, UpdatedAt: at}); err != nil {
		return failed("update message", err)
	}
	return nil
}

// MarkMessageDeleted implements app.Store.
func (s *Store) MarkMessageDeleted(ctx context.Context, id ids.ID, at time.Time) error {
	if err := s.q(ctx).MessageMarkDeleted(ctx, db.MessageMarkDeletedParams{ID: id, DeletedAt: at}); err != nil {
		return failed("delete message", err)
	}
	return nil
}

// MessagesBefore implements app.Store with the partial index
// messages_channel_page_idx, scanned backwards.
func (s *Store) MessagesBefore(ctx context.Context, channelID ids.ID, before *domain.Position, limit int) ([]domain.Message, error) {
	var rows []db.Message
	var err error
	if before == nil {
		rows, err = s.q(ctx).MessagePageLatest(ctx, db.MessagePageLatestParams{ChannelID: channelID, MaxRows: int64(limit)})
	} else {
		rows, err = s.q(ctx).MessagePageBefore(ctx, db.MessagePageBeforeParams{
			ChannelID: channelID, BeforeCreatedAt: before.CreatedAt, BeforeID: before.ID, MaxRows: int64(limit),
		})
	}
	return all(rows, err, messageOf, "list messages")
}

// IsSpaceMember implements chat.Memberships.
func (s *Store) IsSpaceMember(ctx context.Context, spaceID, principalID ids.ID) (bool, error) {
	member, err := s.q(ctx).SpaceMemberExists(ctx, db.SpaceMemberExistsParams{SpaceID: spaceID, PrincipalID: principalID})
	if err != nil {
		return false, failed("is space member", err)
	}
	return member, nil
}

// MembershipsOf implements chat.Memberships with the index
// space_members_principal_idx.
func (s *Store) MembershipsOf(ctx context.Context, principalIDs []ids.ID) (map[ids.ID][]chat.Membership, error) {
	out := make(map[ids.ID][]chat.Membership, len(principalIDs))
	for _, id := range principalIDs {
		out[id] = []chat.Membership{}
	}
	rows, err := s.q(ctx).SpaceMemberListByPrincipals(ctx, principalIDs)
	if err != nil {
		return nil, failed("memberships of", err)
	}
	for _, r := range rows {
		out[r.PrincipalID] = append(out[r.PrincipalID], chat.Membership{SpaceID: r.SpaceID, Level: r.Level})
	}
	return out, nil
}
