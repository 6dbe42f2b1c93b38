package app

import (
	"context"
	"sync"
	"time"

	"bothy/server/internal/chat/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/correlation"
	"bothy/server/internal/kernel/errs"
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

// gatheredPost is one call of PostMessage in the queue of postQueue.
type gatheredPost struct {
	ctx context.Context
	cmd PostMessage
	// out and err are the post's result; decided says that the unit of
	// work of the post's group decided it, written that it accepted it
	// (out is to be written). The goroutine that runs the group sets them
	// before it signals.
	out              Posted
	err              error
	decided, written bool
	// group is the group the post runs when it is told its turn: taken
	// from the queue, with the post first, by the group that ended.
	group []*gatheredPost
	// turn is told true once when the post is to run group, or false once
	// when the group it was in ran and out and err are set.
	turn chan bool
}

// postQueue gathers the posts of one Service. At most groups groups run
// at a time: a post that finds fewer running runs its own at once; the
// posts that arrive meanwhile wait, and when a group ends the first of
// them runs the next group, with up to max of the posts that waited.
// Posts wait only while groups groups run.
type postQueue struct {
	max, groups int
	mu          sync.Mutex
	running     int
	waiting     []*gatheredPost
}

// take removes the next group from the queue: up to max of the posts
// that wait, in the order they arrived. The caller holds mu.
func (q *postQueue) take() []*gatheredPost {
	n := min(len(q.waiting), q.max)
	group := q.waiting[:n:n]
	q.waiting = append([]*gatheredPost(nil), q.waiting[n:]...)
	return group
}

// waitingPosts returns how many posts wait for a group to end.
func (q *postQueue) waitingPosts() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiting)
}

// handOn ends group: the posts that wait, if any, become the next group,
// which its first post runs, and the group's other posts return their
// results. The next group is taken here, with the lock held, so that no
// post is told its turn twice when two groups end at once.
func (q *postQueue) handOn(group []*gatheredPost) {
	q.mu.Lock()
	if len(q.waiting) > 0 {
		next := q.take()
		next[0].group = next
		next[0].turn <- true
	} else {
		q.running--
	}
	q.mu.Unlock()
	for _, o := range group[1:] {
		o.turn <- false
	}
}

// postGathered posts cmd as the principal of ctx in a unit of work shared
// with the posts that wait beside it, and returns what PostMessage does.
// The calling goroutine runs a group when its post is the first of one,
// so the groups need no goroutine of their own and a post never waits for
// more than the groups before its own.
func (s *Service) postGathered(ctx context.Context, cmd PostMessage) (Posted, error) {
	q := s.posts
	p := &gatheredPost{ctx: ctx, cmd: cmd, turn: make(chan bool, 1)}
	q.mu.Lock()
	q.waiting = append(q.waiting, p)
	if q.running < q.groups {
		// Nothing waits while fewer groups run: the group is p alone.
		q.running++
		p.group = q.take()
		q.mu.Unlock()
	} else {
		q.mu.Unlock()
		if lead := <-p.turn; !lead {
			return p.out, p.err
		}
	}
	group := p.group

	defer func() {
		// Also after a panic of the group (a bug): its other posts get an
		// error instead of a result never set, and the queue goes on.
		r := recover()
		if r != nil {
			for _, o := range group {
				o.out, o.err = Posted{}, errGroupPanicked
			}
		}
		q.handOn(group)
		if r != nil {
			panic(r)
		}
	}()
	s.postGroup(group)
	return p.out, p.err
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
	ctx, cancel := groupContext(group)
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

// groupContext returns the context of a group's unit of work: the first
// post's values (its trace and its logger), cancelled by none of the
// posts, since a client that leaves must not fail the others, and with
// the latest of their deadlines, so the group is bounded like the posts
// it serves (http.request_timeout).
func groupContext(group []*gatheredPost) (context.Context, context.CancelFunc) {
	ctx := context.WithoutCancel(group[0].ctx)
	var latest time.Time
	for _, p := range group {
		d, ok := p.ctx.Deadline()
		if !ok {
			return context.WithCancel(ctx)
		}
		if d.After(latest) {
			latest = d
		}
	}
	return context.WithDeadline(ctx, latest)
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
		found, err := s.store.ChannelsByIDs(ctx, channelIDs)
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
