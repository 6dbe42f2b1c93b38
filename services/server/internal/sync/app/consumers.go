package app

import (
	"context"
	"sync"

	"bothy/server/internal/kernel/errs"
	eventsync "bothy/server/internal/sync"
)

// The registration errors.
var (
	// ErrConsumerInvalid: an empty consumer name or a nil handler.
	ErrConsumerInvalid = errs.New(errs.CodeInternal, "sync: a consumer needs a name and a handler")
	// ErrConsumerRegistered: a second handler for the same consumer name.
	ErrConsumerRegistered = errs.New(errs.CodeInternal, "sync: consumer is already registered")
	// ErrConsumersStarted: Register or Start after Start.
	ErrConsumersStarted = errs.New(errs.CodeInternal, "sync: consumers already started")
)

// Consumers implements sync.Consumers: modules register their handlers
// while the process is assembled, then the worker roles (worker, all) call
// Start, which runs one Runner per consumer in the background.
type Consumers struct {
	deps Deps
	opts Options

	mu      sync.Mutex
	runners map[eventsync.ConsumerName]*Runner
	started bool
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

var _ eventsync.Consumers = (*Consumers)(nil)

// NewConsumers returns an empty registry. It returns an error for missing
// deps or invalid options.
func NewConsumers(d Deps, o Options) (*Consumers, error) {
	if err := d.validate(); err != nil {
		return nil, err
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	return &Consumers{deps: d, opts: o, runners: map[eventsync.ConsumerName]*Runner{}}, nil
}

// Register implements sync.Consumers. Errors: ErrConsumerInvalid,
// ErrConsumerRegistered, ErrConsumersStarted.
func (c *Consumers) Register(name eventsync.ConsumerName, h eventsync.ConsumerHandler) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return ErrConsumersStarted
	}
	if _, dup := c.runners[name]; dup {
		return ErrConsumerRegistered
	}
	r, err := NewRunner(name, h, c.deps, c.opts)
	if err != nil {
		return err
	}
	c.runners[name] = r
	return nil
}

// Runner returns the runner of a registered consumer and whether name is
// registered, so a caller outside the package can tell which consumers a
// registry runs (wire's tests check the consumers of each role this way).
func (c *Consumers) Runner(name eventsync.ConsumerName) (*Runner, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.runners[name]
	return r, ok
}

// Start runs every registered consumer in the background until Stop or
// until ctx ends. It returns ErrConsumersStarted when called twice.
func (c *Consumers) Start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return ErrConsumersStarted
	}
	c.started = true
	ctx, c.cancel = context.WithCancel(ctx)
	for _, r := range c.runners {
		c.wg.Go(func() { _ = r.Run(ctx) })
	}
	return nil
}

// Stop ends every runner and waits until their sessions are closed, so
// another process can take the consumers over at once. It is safe to call
// more than once and before Start.
func (c *Consumers) Stop() {
	c.mu.Lock()
	cancel := c.cancel
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	c.wg.Wait()
}
