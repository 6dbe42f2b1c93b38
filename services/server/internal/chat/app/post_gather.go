package app

import (
	"context"

	"bothy/server/internal/chat/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/correlation"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/gather"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/txn"
)

// The posts that arrive while a post's unit of work runs share the next
// one (ADR 0098): a busy server pays one BEGIN, one COMMIT with its WAL
// flush and two round trips for several posts instead of for each, and
// reads each channel and each author's standing once for them.

// errGroupPanicked is the answer of the posts of a group whose unit of
// work panicked.
var errGroupPanicked = errs.New(errs.CodeInternal, "chat: the unit of work of gathered posts panicked")

// gatheredPost is one call of PostMessage in the queue of gathered posts.
type gatheredPost struct {
	ctx context.Context
	cmd PostMessage
	// out and err are the post's result; decided says that the unit of
	// work of the post's group decided it, written that it accepted it
	// (out is to be written). The goroutine that runs the group sets them
	// before the post's Do returns.
	out              Posted
	err              error
	decided, written bool
}

// postGathered posts cmd as the principal of ctx in a unit of work shared
// with the posts that wait beside it (gather.Queue, postGroup), and
// returns what PostMessage does.
func (s *Service) postGathered(ctx context.Context, cmd PostMessage) (Posted, error) {
	p := &gatheredPost{ctx: ctx, cmd: cmd}
	s.posts.Do(p)
	return p.out, p.err
}

// abandonPosts answers the posts of a group whose unit of work panicked
// (a bug) with an internal error instead of a result never set.
func abandonPosts(group []*gatheredPost) {
	for _, p := range group {
		p.out, p.err = Posted{}, errGroupPanicked
	}
}

// postGroup posts the group in one unit of work and sets each post's
// result. Each post is decided as PostMessage decides it alone (the
// channel, the authorization with its audited denial, the text), and a
// post refused gets its error without failing the others. When the
// database refuses the unit of work (txn.Refused: nothing of it was
// written), each post that it had not refused runs again alone, so one
// post's failure never becomes another's; any other failure (a lost
// connection, whose commit may or may not have happened; an ended
// deadline) is the answer of each post it had not refused, as it would
// be alone.
func (s *Service) postGroup(group []*gatheredPost) {
	if len(group) == 1 {
		p := group[0]
		p.out, p.err = s.postAlone(p.ctx, p.cmd)
		return
	}
	ctxs := make([]context.Context, len(group))
	for i, p := range group {
		ctxs[i] = p.ctx
	}
	// The first post's values, no post's cancel, the latest deadline
	// (http.request_timeout bounds the group like its posts).
	ctx, cancel := gather.Context(ctxs)
	defer cancel()
	err := s.uow.Do(ctx, func(ctx context.Context) error {
		return s.postTogether(ctx, group)
	})
	if err == nil {
		return
	}
	refused := txn.Refused(err)
	for _, p := range group {
		if p.decided && !p.written {
			continue // refused: its own error stands
		}
		if refused {
			p.out, p.err = s.postAlone(p.ctx, p.cmd)
		} else {
			p.out, p.err = Posted{}, err
		}
	}
}

// decisionContext returns the context of p's decision in its group: the
// group's unit of work (ctx) with what the decision reads of p's own
// request, its principal and its correlation ID (which the audit entry of
// a denial keeps). The other values (the logger, the span) stay the
// group's: those of its first post.
func decisionContext(ctx context.Context, p *gatheredPost) context.Context {
	return correlation.With(actor.With(ctx, actor.From(p.ctx)), correlation.From(p.ctx))
}

// postTogether is the unit of work of a group: the channels (one
// statement) and the standings of the authors (one statement for their
// grants, one for the memberships of the persons) in one round trip, each
// post decided, then the messages (one statement) and their events (one)
// with the COMMIT in one round trip (ADR 0099). It may run more than once
// (txn.UnitOfWork.Do), so it sets every result anew.
func (s *Service) postTogether(ctx context.Context, group []*gatheredPost) error {
	channels := map[ids.ID]*domain.Channel{}
	var channelIDs []ids.ID
	authors := make([]actor.Principal, 0, len(group))
	for _, p := range group {
		p.out, p.err, p.decided, p.written = Posted{}, nil, false, false
		authors = append(authors, actor.From(p.ctx))
		if _, seen := channels[p.cmd.ChannelID]; !seen {
			// The zero Channel stands for one that does not exist.
			channels[p.cmd.ChannelID] = &domain.Channel{}
			channelIDs = append(channelIDs, p.cmd.ChannelID)
		}
	}
	err := txn.Together(ctx, func(ctx context.Context) error {
		found, err := s.channelsByIDs(ctx, channelIDs)
		for _, c := range found {
			*channels[c.ID] = c
		}
		return err
	}, func(ctx context.Context) error {
		return s.az.Preload(ctx, authorize.MessagePost, authors...)
	})
	if err != nil {
		return err
	}

	var accepted []Posted
	for _, p := range group {
		p.decided = true
		if p.err = p.ctx.Err(); p.err != nil {
			continue
		}
		// A post's refusal, and any other error of its decision (the audit
		// of a denial is written apart from the unit of work), is its own.
		posted, err := s.admitPost(decisionContext(ctx, p), channels[p.cmd.ChannelID], p.cmd)
		if err != nil {
			p.err = err
			continue
		}
		p.out, p.written = posted, true
		accepted = append(accepted, posted)
	}
	if len(accepted) == 0 {
		return nil
	}
	return txn.Last(ctx, s.postWrites(accepted...)...)
}
