package app

import (
	"context"

	"bothy/server/internal/chat/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/txn"
)

// PostMessage is the input of Service.PostMessage.
type PostMessage struct {
	// ChannelID is the channel to post in.
	ChannelID ids.ID
	// Text of the message; see domain.ValidateText.
	Text string
	// ThreadID makes the message a reply in that thread of the channel.
	ThreadID ids.ID
	// StartThread opens a new thread with the message as its root; it may
	// not be combined with ThreadID.
	StartThread bool
}

// Posted is the result of Service.PostMessage.
type Posted struct {
	// Message is the new message.
	Message domain.Message
	// Thread is the thread the message opened; nil without StartThread.
	Thread *domain.Thread
}

// PostMessage posts a message in a channel (message.post: members with
// write, apps with messages:write and a write grant) and appends
// message.created, and thread.created after it when the message opens a
// thread. Errors: not_found for an unknown or invisible channel, the other
// denials of message.post, validation_failed /text, /thread_id (not_found:
// no such thread in the channel) and /start_thread (exclusive with
// thread_id).
//
// A plain message (neither ThreadID nor StartThread) posted outside a unit
// of work shares its unit of work with the posts that arrive while
// another runs, up to chat.post_gather_max of them (ADR 0098,
// postGathered); its result is what it would be alone. Inside a unit of
// work of the caller the post joins it, and the caller commits.
func (s *Service) PostMessage(ctx context.Context, cmd PostMessage) (Posted, error) {
	if s.opts.PostGatherMax > 1 && cmd.ThreadID.IsZero() && !cmd.StartThread && !txn.InUnitOfWork(ctx) {
		return s.postGathered(ctx, cmd)
	}
	return s.postAlone(ctx, cmd)
}

// postAlone posts cmd in a unit of work of its own.
func (s *Service) postAlone(ctx context.Context, cmd PostMessage) (Posted, error) {
	var out Posted
	err := s.uow.Do(ctx, func(ctx context.Context) error {
		out = Posted{}
		ch, err := s.channel(ctx, cmd.ChannelID, authorize.MessagePost)
		if err != nil {
			return err
		}
		posted, err := s.admitPost(ctx, &ch, cmd)
		if err != nil {
			return err
		}
		// The rows and their events do not depend on one another and are
		// the use case's last statements: they travel in one round trip
		// (ADR 0085) with the COMMIT (ADR 0090).
		if err := txn.Last(ctx, s.postWrites(posted)...); err != nil {
			return err
		}
		out = posted
		return nil
	})
	return out, err
}

// admitPost decides cmd for the principal of ctx in ch (loaded with the
// standing of the principal, s.channel; the zero Channel when there is
// none) and returns the message, and the thread it opens, to write.
// Errors: those of PostMessage.
func (s *Service) admitPost(ctx context.Context, ch *domain.Channel, cmd PostMessage) (Posted, error) {
	if ch.ID.IsZero() {
		return Posted{}, errs.NotFound()
	}
	if err := s.check(ctx, authorize.MessagePost, channelResource(ch.SpaceID, ch.ID)); err != nil {
		return Posted{}, err
	}
	fields := domain.ValidateText("/text", cmd.Text, s.opts.MessageMaxBytes)
	if cmd.StartThread && !cmd.ThreadID.IsZero() {
		fields = append(fields, errs.Field("/start_thread", domain.CodeExclusive))
	} else if !cmd.ThreadID.IsZero() {
		th, found, err := s.store.ThreadByID(ctx, cmd.ThreadID)
		if err != nil {
			return Posted{}, err
		}
		if !found || th.ChannelID != ch.ID {
			fields = append(fields, errs.Field("/thread_id", domain.CodeNotFound))
		}
	}
	if len(fields) > 0 {
		return Posted{}, errs.Validation(fields...)
	}

	now := s.now()
	author := actor.From(ctx).ID
	id, err := newID(now)
	if err != nil {
		return Posted{}, err
	}
	m := domain.Message{ID: id, SpaceID: ch.SpaceID, ChannelID: ch.ID, ThreadID: cmd.ThreadID,
		AuthorID: author, Text: cmd.Text, CreatedAt: now}
	if !cmd.StartThread {
		return Posted{Message: m}, nil
	}
	threadID, err := newID(now)
	if err != nil {
		return Posted{}, err
	}
	m.ThreadID = threadID
	return Posted{Message: m, Thread: &domain.Thread{ID: threadID, SpaceID: ch.SpaceID, ChannelID: ch.ID,
		RootMessageID: m.ID, CreatedBy: author, CreatedAt: now}}, nil
}

// postWrites returns the writes of posts, in this order: their messages
// (one statement), the threads they open (whose rows reference the
// messages'), and their events (one statement), each post's message.created
// before the thread.created of the thread it opens, the posts in their
// order.
func (s *Service) postWrites(posts ...Posted) []func(ctx context.Context) error {
	messages := make([]domain.Message, 0, len(posts))
	events := make([]eventlog.Event, 0, len(posts))
	var threads []domain.Thread
	for _, p := range posts {
		m := p.Message
		messages = append(messages, m)
		events = append(events, eventlog.Event{Type: eventlog.MessageCreated, ResourceID: m.ID,
			SpaceID: m.SpaceID, ChannelID: m.ChannelID, ThreadID: m.ThreadID, ActorID: m.AuthorID,
			Payload: domain.MessageCreatedPayload(m)})
		if th := p.Thread; th != nil {
			threads = append(threads, *th)
			events = append(events, eventlog.Event{Type: eventlog.ThreadCreated, ResourceID: th.ID,
				SpaceID: th.SpaceID, ChannelID: th.ChannelID, ThreadID: th.ID, ActorID: th.CreatedBy,
				Payload: domain.ThreadCreatedPayload(*th)})
		}
	}
	writes := []func(ctx context.Context) error{
		func(ctx context.Context) error { return s.store.InsertMessages(ctx, messages) },
	}
	for _, th := range threads {
		writes = append(writes, func(ctx context.Context) error { return s.store.InsertThread(ctx, th) })
	}
	return append(writes, func(ctx context.Context) error {
		_, err := s.events.AppendAll(ctx, events)
		return err
	})
}
