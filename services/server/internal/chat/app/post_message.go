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
func (s *Service) PostMessage(ctx context.Context, cmd PostMessage) (Posted, error) {
	var out Posted
	err := s.uow.Do(ctx, func(ctx context.Context) error {
		out = Posted{}
		ch, err := s.channel(ctx, cmd.ChannelID, authorize.MessagePost)
		if err != nil {
			return err
		}
		if err := s.check(ctx, authorize.MessagePost, channelResource(ch.SpaceID, ch.ID)); err != nil {
			return err
		}
		fields := domain.ValidateText("/text", cmd.Text, s.opts.MessageMaxBytes)
		if cmd.StartThread && !cmd.ThreadID.IsZero() {
			fields = append(fields, errs.Field("/start_thread", domain.CodeExclusive))
		} else if !cmd.ThreadID.IsZero() {
			th, found, err := s.store.ThreadByID(ctx, cmd.ThreadID)
			if err != nil {
				return err
			}
			if !found || th.ChannelID != ch.ID {
				fields = append(fields, errs.Field("/thread_id", domain.CodeNotFound))
			}
		}
		if len(fields) > 0 {
			return errs.Validation(fields...)
		}

		now := s.now()
		author := actor.From(ctx).ID
		id, err := newID(now)
		if err != nil {
			return err
		}
		m := domain.Message{ID: id, SpaceID: ch.SpaceID, ChannelID: ch.ID, ThreadID: cmd.ThreadID,
			AuthorID: author, Text: cmd.Text, CreatedAt: now}
		var th *domain.Thread
		if cmd.StartThread {
			threadID, err := newID(now)
			if err != nil {
				return err
			}
			m.ThreadID = threadID
			th = &domain.Thread{ID: threadID, SpaceID: ch.SpaceID, ChannelID: ch.ID, RootMessageID: m.ID,
				CreatedBy: author, CreatedAt: now}
		}
		// The rows and their events do not depend on one another and are
		// the use case's last statements: they travel in one round trip
		// (ADR 0085) with the COMMIT (ADR 0090), the thread's after the
		// message's, whose row it references.
		err = txn.Last(ctx,
			func(ctx context.Context) error { return s.store.InsertMessage(ctx, m) },
			func(ctx context.Context) error {
				if th == nil {
					return nil
				}
				return s.store.InsertThread(ctx, *th)
			},
			func(ctx context.Context) error {
				_, err := s.events.Append(ctx, eventlog.Event{Type: eventlog.MessageCreated, ResourceID: m.ID,
					SpaceID: m.SpaceID, ChannelID: m.ChannelID, ThreadID: m.ThreadID, ActorID: author,
					Payload: domain.MessageCreatedPayload(m)})
				return err
			},
			func(ctx context.Context) error {
				if th == nil {
					return nil
				}
				_, err := s.events.Append(ctx, eventlog.Event{Type: eventlog.ThreadCreated, ResourceID: th.ID,
					SpaceID: th.SpaceID, ChannelID: th.ChannelID, ThreadID: th.ID, ActorID: author,
					Payload: domain.ThreadCreatedPayload(*th)})
				return err
			},
		)
		if err != nil {
			return err
		}
		out = Posted{Message: m, Thread: th}
		return nil
	})
	return out, err
}
