package app

import (
	"context"
	"crypto/rand"
	"errors"
	"time"

	"bothy/server/internal/chat/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/auditing"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/kernel/gather"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/txn"
	"bothy/server/internal/kernel/watched"
)

// Options configure the chat use cases.
type Options struct {
	// MessageMaxBytes is chat.message_max_bytes: the most bytes of UTF-8
	// in one message text; a longer text is refused. At least 1.
	MessageMaxBytes int
	// NameMaxChars is chat.name_max_chars: the most characters in the
	// name of a space or channel. At least 1.
	NameMaxChars int
	// PageSizeDefault is chat.page_size_default: the messages on a page
	// when the caller asks for no size. At least 1.
	PageSizeDefault int
	// PageSizeMax is chat.page_size_max: a larger requested page size is
	// lowered to it. At least PageSizeDefault.
	PageSizeMax int
	// PostGatherMax is chat.post_gather_max: the most posts that share
	// one unit of work after waiting for the one before (ADR 0098); 1
	// posts each alone. At least 1.
	PostGatherMax int
	// PostGatherGroups is chat.post_gather_groups: the most units of work
	// of gathered posts that run at once; a post waits only while that
	// many run. At least 1.
	PostGatherGroups int
	// ChannelCacheTTL and ChannelCacheEntries are chat.channel_cache_ttl
	// and chat.channel_cache_entries: how long and how many channels the
	// Service keeps in memory (ADR 0103); 0 keeps none.
	ChannelCacheTTL     time.Duration
	ChannelCacheEntries int
}

// Deps are the collaborators of the chat use cases; all are required but
// Changes.
type Deps struct {
	// Store persists the chat tree.
	Store Store
	// UnitOfWork runs each use case in one transaction.
	UnitOfWork txn.UnitOfWork
	// Authorizer decides every action.
	Authorizer authorize.Authorizer
	// Events appends the durable events.
	Events eventlog.Appender
	// Audit records the allows of audited actions.
	Audit auditing.Recorder
	// Clock stamps rows and events.
	Clock clock.Clock
	// Changes is the process's hub of watched facts (ADR 0103): the cache
	// of channels joins it, and a new membership is reported to it (the
	// Authorizer's cache of standings hears it). Nil keeps no channel in
	// memory.
	Changes *watched.Hub
}

// Service runs the chat use cases. The acting principal is actor.From(ctx)
// (the HTTP chain puts it there). Every error is an *errs.Error: the
// denials of authorize (not_found for invisible and unknown resources
// alike), validation_failed with JSON pointers (nothing written), conflict
// with a reason, or internal.
type Service struct {
	store  Store
	uow    txn.UnitOfWork
	az     authorize.Authorizer
	events eventlog.Appender
	audit  auditing.Recorder
	clock  clock.Clock
	opts   Options
	// posts gathers the posts that arrive together (ADR 0098).
	posts *gather.Queue[gatheredPost]
	// channels keeps channels across units of work (ADR 0103).
	channels *watched.Cache[ids.ID, domain.Channel]
	changes  *watched.Hub
}

// NewService returns the chat service. It returns an error for a missing
// dependency or options out of range.
func NewService(d Deps, o Options) (*Service, error) {
	if d.Store == nil || d.UnitOfWork == nil || d.Authorizer == nil || d.Events == nil || d.Audit == nil || d.Clock == nil {
		return nil, errors.New("chat: NewService needs a store, a unit of work, an authorizer, an appender, a recorder and a clock")
	}
	switch {
	case o.MessageMaxBytes < 1:
		return nil, errors.New("chat: chat.message_max_bytes must be at least 1")
	case o.NameMaxChars < 1:
		return nil, errors.New("chat: chat.name_max_chars must be at least 1")
	case o.PageSizeDefault < 1 || o.PageSizeMax < o.PageSizeDefault:
		return nil, errors.New("chat: chat.page_size_default must be at least 1 and at most chat.page_size_max")
	case o.PostGatherMax < 1 || o.PostGatherGroups < 1:
		return nil, errors.New("chat: chat.post_gather_max and chat.post_gather_groups must be at least 1")
	}
	s := &Service{store: d.Store, uow: d.UnitOfWork, az: d.Authorizer, events: d.Events, audit: d.Audit,
		clock: d.Clock, opts: o, changes: d.Changes,
		channels: watched.NewCache(o.ChannelCacheTTL, o.ChannelCacheEntries, func(id ids.ID, _ domain.Channel) ids.ID { return id })}
	if s.channels.On() {
		s.changes.Add(s.channels)
	}
	var err error
	if s.posts, err = gather.New(o.PostGatherMax, o.PostGatherGroups, s.postGroup, abandonPosts); err != nil {
		return nil, err
	}
	return s, nil
}

// now returns the clock's time cut to microseconds, the precision of
// timestamptz, so returned rows equal stored rows.
func (s *Service) now() time.Time { return clock.Stamp(s.clock) }

// newID returns a UUIDv7 for at.
func newID(at time.Time) (ids.ID, error) {
	id, err := ids.NewAt(at, rand.Reader)
	if err != nil {
		return ids.Zero, errs.Wrap(err, "chat: new ID")
	}
	return id, nil
}

// check authorizes action on r for the principal of ctx.
func (s *Service) check(ctx context.Context, action authorize.Action, r authorize.Resource) error {
	return authorize.Check(ctx, s.az, actor.From(ctx), action, r)
}

// visible reports whether the principal of ctx may do action on r, in
// filter mode: lists drop what the principal may not see without auditing
// a denial per row.
func (s *Service) visible(ctx context.Context, action authorize.Action, r authorize.Resource) (bool, error) {
	d, err := s.az.Authorize(authorize.Filter(ctx), actor.From(ctx), action, r)
	if err != nil {
		return false, err
	}
	return d.Allowed(), nil
}

// recordAllow writes the allow entry of an audited action in the unit of
// work (R-AZ-03).
func (s *Service) recordAllow(ctx context.Context, action authorize.Action, kind authorize.ResourceKind, id ids.ID, details ...auditing.Detail) error {
	return s.audit.Record(ctx, auditing.Entry{Action: string(action), Actor: actor.From(ctx), ResourceKind: string(kind),
		ResourceID: id, Outcome: auditing.Allow, Details: details})
}

// admitNamed authorizes action on r, validates the name of a new space or
// channel and returns the ID and time of the new row.
func (s *Service) admitNamed(ctx context.Context, action authorize.Action, r authorize.Resource, name string) (ids.ID, time.Time, error) {
	if err := s.check(ctx, action, r); err != nil {
		return ids.Zero, time.Time{}, err
	}
	if fields := domain.ValidateName("/name", name, s.opts.NameMaxChars); fields != nil {
		return ids.Zero, time.Time{}, errs.Validation(fields...)
	}
	now := s.now()
	id, err := newID(now)
	return id, now, err
}

// space loads a space; an unknown ID is not_found before any decision.
func (s *Service) space(ctx context.Context, id ids.ID) (domain.Space, error) {
	sp, found, err := s.store.SpaceByID(ctx, id)
	if err == nil && !found {
		err = errs.NotFound()
	}
	return sp, err
}

// channel loads a channel to check action on; an unknown ID is not_found.
// The facts the check may consult (the principal of ctx's grants and
// memberships) do not depend on the channel, so they are loaded in the
// same round trip (authorize.Authorizer.Preload, ADR 0085).
func (s *Service) channel(ctx context.Context, id ids.ID, action authorize.Action) (domain.Channel, error) {
	var ch domain.Channel
	err := txn.Together(ctx,
		func(ctx context.Context) error {
			found, err := s.channelsByIDs(ctx, []ids.ID{id})
			if err == nil && len(found) == 0 {
				err = errs.NotFound()
			}
			if len(found) > 0 {
				ch = found[0]
			}
			return err
		},
		func(ctx context.Context) error { return s.az.Preload(ctx, action, actor.From(ctx)) },
	)
	return ch, err
}

// channelsByIDs returns those of channelIDs that exist, from the cache of
// channels where it may serve them and from the store (one statement, none
// when the cache served all) for the others, whose answer the cache keeps
// unless a change arrived meanwhile. An unknown channel is never cached.
func (s *Service) channelsByIDs(ctx context.Context, channelIDs []ids.ID) ([]domain.Channel, error) {
	now := s.clock.Now()
	out := make([]domain.Channel, 0, len(channelIDs))
	var missing []ids.ID
	for _, id := range channelIDs {
		if ch, ok := s.channels.Get(ctx, id, now); ok {
			out = append(out, ch)
		} else {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	generation := s.channels.Begin()
	found, err := s.store.ChannelsByIDs(ctx, missing)
	if err != nil {
		return nil, err
	}
	for _, ch := range found {
		s.channels.Put(ctx, generation, ch.ID, ch, now, time.Time{})
	}
	return append(out, found...), nil
}

// liveMessage loads and locks a live message; an unknown or deleted ID is
// not_found.
func (s *Service) liveMessage(ctx context.Context, id ids.ID) (domain.Message, error) {
	m, found, err := s.store.LiveMessageForUpdate(ctx, id)
	if err == nil && !found {
		err = errs.NotFound()
	}
	return m, err
}

// spaceResource and channelResource fill a Resource from rows.
func spaceResource(id ids.ID) authorize.Resource {
	return authorize.Resource{Kind: authorize.KindSpace, ID: id, SpaceID: id}
}

func channelResource(spaceID, channelID ids.ID) authorize.Resource {
	return authorize.Resource{Kind: authorize.KindChannel, ID: channelID, SpaceID: spaceID, ChannelID: channelID}
}
