package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"bothy/server/cmd/internal/localrun"
	"bothy/server/internal/platform/config"
	"bothy/server/internal/platform/otel"
	"bothy/server/internal/wire"
)

// Waits of the demo. Each is bounded on its own, and all of them by
// demoOptions.Timeout, so the demo never hangs.
const (
	// readyWait bounds the wait for the process to answer /readyz.
	readyWait = 20 * time.Second
	// deliveryWait bounds each wait for deliveries to arrive or to reach
	// their final status.
	deliveryWait = 20 * time.Second
	// pollEvery is the pause between two looks at a condition.
	pollEvery = 50 * time.Millisecond
	// stopMargin is added to http.shutdown_timeout and
	// jobs.shutdown_timeout for the wait until the process has stopped.
	stopMargin = 5 * time.Second
)

// The people and names of the demo (the white-label world: example.com,
// Alex, Sam and Robin).
const (
	ownerEmail  = "robin@example.com"
	ownerName   = "Robin"
	spaceName   = "Support"
	channelName = "Eskalation"
	appName     = "Tracker"
	eventType   = "message.created"
)

// demoMessages are the texts Alex posts while Tracker holds its grant; one
// more is posted after the grant is revoked.
var demoMessages = []string{
	"The printer on floor 2 is down again.",
	"Sam, can you take this one?",
	"Sam fixed it, closing the ticket.",
	"One more thing for the record.",
}

// demoOptions are the inputs of runDemo.
type demoOptions struct {
	// ConfigFile is the YAML configuration (database, secrets); empty
	// means none. The demo adds the keys of its receiver and listeners.
	ConfigFile string
	// Environ holds BOTHY_ variables (os.Environ()); they win over the
	// file, and the demo's own keys win over them.
	Environ []string
	// Out receives the demo's log, one line per step and delivery.
	Out io.Writer
	// ServerLog receives the process's JSON log lines at log.level.
	ServerLog io.Writer
	// Messages is how many messages Alex posts (and the receiver must
	// verify) before the grant is revoked: 1 to len(demoMessages)-1.
	Messages int
	// Timeout bounds the whole demo.
	Timeout time.Duration
}

// outcome is what the demo saw.
type outcome struct {
	// Verified are the deliveries the receiver accepted, one per message
	// posted while Tracker held its grant, in arrival order.
	Verified []delivery
	// Dead is the delivery of the message posted after the revocation, as
	// listWebhookDeliveries shows it.
	Dead deliveryRow
	// Requests is how many requests reached the receiver in total.
	Requests int
}

// deliveryRow is a delivery as listWebhookDeliveries returns it.
type deliveryRow struct {
	ID           string `json:"id"`
	EventSeq     int64  `json:"event_seq"`
	EventID      string `json:"event_id"`
	EventType    string `json:"event_type"`
	Status       string `json:"status"`
	Attempt      int    `json:"attempt"`
	LastError    string `json:"last_error"`
	ResponseCode int    `json:"response_code"`
}

// runDemo runs the whole scenario and returns what it saw; any error means
// the demo failed (an expected delivery missing or unverified, a step
// answered unexpectedly, a deadline passed). It starts a webhook receiver
// and a process of role all in this program, drives the public API over
// 127.0.0.1 and stops both again, whatever happens:
//
//  1. The receiver listens on 127.0.0.1 with a certificate for
//     hooks.example.com from a CA generated for this run; the CA goes into a
//     temporary file named by egress.extra_ca_file.
//  2. The configuration is the file and environment plus
//     webhook.allowed_hosts hooks.example.com:<port>, egress.allowed_hosts
//     hooks.example.com:<port>;allow_private and two free loopback ports
//     for the listeners; the process resolves hooks.example.com to
//     127.0.0.1 (there is no DNS here), and its egress guard still checks
//     that address.
//  3. Robin is created as owner (the use case of `bothy owner create`) and
//     signs in; Robin creates Alex and Sam, the space Support with both as
//     members and the channel Eskalation; registers Tracker (webhook
//     delivery to the receiver), installs it, replaces the manifest's
//     subscription (v1a only) by one with HMAC, grants Tracker read on
//     Support/Eskalation.
//  4. The receiver gets the HMAC secret of the create response and the
//     public keys of getWebhookKeys; Alex posts messages and the receiver
//     verifies both signatures of each delivery.
//  5. Robin pauses the subscription; Alex posts again; once the delivery is
//     pending Robin revokes the grant and resumes; the delivery turns dead
//     with last_error not_authorized and no request reaches the receiver.
func runDemo(ctx context.Context, o demoOptions) (res outcome, err error) {
	if o.Messages < 1 || o.Messages >= len(demoMessages) {
		return res, fmt.Errorf("messages must be 1 to %d", len(demoMessages)-1)
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	out := &printer{w: o.Out, start: time.Now()}

	tmp, err := os.MkdirTemp("", "bothy-demo-")
	if err != nil {
		return res, fmt.Errorf("creating a temporary directory: %w", err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()

	recv, err := newReceiver()
	if err != nil {
		return res, err
	}
	recv.onDelivery = out.delivery
	recv.Start()
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopMargin)
		defer cancel()
		recv.Stop(stopCtx)
	}()
	caFile := filepath.Join(tmp, "receiver-ca.pem")
	if err := os.WriteFile(caFile, recv.CAPEM, 0o600); err != nil {
		return res, fmt.Errorf("writing the receiver's CA certificate: %w", err)
	}
	out.line("receiver", "%s on 127.0.0.1, certificate from a CA made for this run", recv.url())

	cfg, err := demoConfig(o, recv, caFile)
	if err != nil {
		return res, err
	}
	out.line("config", "webhook.allowed_hosts %s; egress.allowed_hosts %s;allow_private; egress.extra_ca_file set",
		recv.hostPort(), recv.hostPort())

	proc, err := startProcess(ctx, cfg, o.ServerLog)
	if err != nil {
		return res, err
	}
	defer func() {
		if stopErr := proc.stop(cfg.HTTP.DrainDelay + cfg.HTTP.ShutdownTimeout + cfg.Jobs.ShutdownTimeout + stopMargin); err == nil {
			err = stopErr
		}
	}()
	api := localrun.NewClient(cfg.HTTP.ListenAddress, 2)
	defer api.Close()
	if err := waitFor(ctx, proc, readyWait, "the server to answer /readyz", func() (bool, error) {
		return api.Ready(ctx), nil
	}); err != nil {
		return res, err
	}
	out.line("server", "role all ready on http://%s (process in this program)", cfg.HTTP.ListenAddress)

	s := &scenario{api: api, out: out, recv: recv, proc: proc}
	if err := s.setUp(ctx, cfg); err != nil {
		return res, err
	}
	if res.Verified, err = s.deliver(ctx, demoMessages[:o.Messages]); err != nil {
		return res, err
	}
	if res.Dead, err = s.revokeAndPost(ctx, demoMessages[o.Messages]); err != nil {
		return res, err
	}
	res.Requests = len(recv.deliveries())
	if res.Requests != len(res.Verified) {
		return res, fmt.Errorf("the receiver got %d requests, want %d", res.Requests, len(res.Verified))
	}
	return res, nil
}

// demoConfig loads the configuration of the demo's process: the receiver's
// host in webhook.allowed_hosts and, with allow_private, in
// egress.allowed_hosts; its CA in egress.extra_ca_file; and two free
// loopback ports for http.listen_address and
// http.operator_listen_address, so the demo never collides with `make run`;
// and no http.drain_delay, as no load balancer routes to it.
// These come first in the environment, so they win over o.Environ and the
// file.
func demoConfig(o demoOptions, recv *receiver, caFile string) (*wire.Config, error) {
	addrs, err := localrun.FreeLoopbackAddresses(2)
	if err != nil {
		return nil, err
	}
	environ := []string{
		config.EnvName("webhook.allowed_hosts") + "=" + recv.hostPort(),
		config.EnvName("egress.allowed_hosts") + "=" + recv.hostPort() + ";allow_private",
		config.EnvName("egress.extra_ca_file") + "=" + caFile,
		config.EnvName("http.listen_address") + "=" + addrs[0],
		config.EnvName("http.operator_listen_address") + "=" + addrs[1],
		// No load balancer routes to the demo's server: nothing to drain.
		config.EnvName("http.drain_delay") + "=0s",
	}
	return wire.Load(o.ConfigFile, append(environ, o.Environ...))
}

// fixedResolver resolves one host name to one address and every other name
// to "not found". The demo has no DNS for hooks.example.com; the egress
// guard checks the address it returns like any other (the allow_private
// entry of egress.allowed_hosts lets 127.0.0.1 through).
type fixedResolver struct {
	host string
	addr netip.Addr
}

// LookupNetIP implements egress.Resolver.
func (r fixedResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !strings.EqualFold(strings.TrimSuffix(host, "."), r.host) || network == "ip6" {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []netip.Addr{r.addr}, nil
}

// runningProcess is the process of role all, running in a goroutine.
type runningProcess struct {
	cancel  context.CancelFunc
	stopped chan struct{}
	err     error
}

// startProcess assembles a process of role all from cfg, exactly as `bothy
// serve` does but with the fixed resolver, and runs it until stop.
func startProcess(ctx context.Context, cfg *wire.Config, serverLog io.Writer) (*runningProcess, error) {
	level, err := otel.ParseLevel(cfg.Log.Level)
	if err != nil {
		return nil, err
	}
	p, err := wire.NewProcess(ctx, cfg, wire.RoleAll, wire.Deps{
		Log:      otel.NewLogger(serverLog, level),
		Resolver: fixedResolver{host: receiverHost, addr: netip.MustParseAddr("127.0.0.1")},
	})
	if err != nil {
		return nil, fmt.Errorf("assembling the server: %w", err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	rp := &runningProcess{cancel: cancel, stopped: make(chan struct{})}
	go func() {
		defer close(rp.stopped)
		rp.err = p.Run(runCtx)
	}()
	return rp, nil
}

// check returns an error once the process has stopped (it must run until
// stop).
func (p *runningProcess) check() error {
	select {
	case <-p.stopped:
		if p.err != nil {
			return fmt.Errorf("the server stopped: %w", p.err)
		}
		return errors.New("the server stopped early")
	default:
		return nil
	}
}

// stop ends the process and waits at most limit for it to finish.
func (p *runningProcess) stop(limit time.Duration) error {
	p.cancel()
	select {
	case <-p.stopped:
		return p.err
	case <-time.After(limit):
		return errors.New("the server did not stop in time")
	}
}

// waitFor polls cond every pollEvery until it holds, returns an error, the
// process stops, or limit (or ctx) runs out; what names the awaited state.
func waitFor(ctx context.Context, p *runningProcess, limit time.Duration, what string, cond func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		if err := p.check(); err != nil {
			return err
		}
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				return fmt.Errorf("interrupted while waiting for %s", what)
			}
			return fmt.Errorf("timed out waiting for %s", what)
		case <-tick.C:
		}
	}
}

// scenario is the state of the API walk: ids and tokens, never printed.
type scenario struct {
	api  *localrun.Client
	out  *printer
	recv *receiver
	proc *runningProcess

	robin, alex  string // session tokens
	space, chann string
	app, sub     string
	grant        string
	posted       []string // message IDs, in posting order
	deliveredIDs []string // webhook-ids the receiver accepted
}

type idOnly struct {
	ID string `json:"id"`
}

// setUp creates the owner, the people, the space and channel, the app with
// its HMAC subscription and the grant, and gives the receiver the secret
// and the public keys.
func (s *scenario) setUp(ctx context.Context, cfg *wire.Config) error {
	password, err := localrun.CreateOwner(ctx, cfg, "bothy-demo", ownerEmail, ownerName)
	if err != nil {
		return err
	}
	s.out.line("owner", "%s <%s> created as owner (identity bootstrap, as `bothy owner create` does)", ownerName, ownerEmail)
	if s.robin, err = s.api.SignIn(ctx, ownerEmail, password); err != nil {
		return err
	}
	s.out.line("sign-in", "%s signed in (createSession; a sign-in counts as a fresh step-up)", ownerName)

	var alexPassword string
	var people []string
	for _, p := range []struct{ name, email string }{{"Alex", "alex@example.com"}, {"Sam", "sam@example.com"}} {
		pw := localrun.GeneratePassword()
		var person idOnly
		if err := s.api.Call(ctx, "createPerson", s.robin, http.MethodPost, "/people",
			map[string]any{"email": p.email, "display_name": p.name, "password": pw, "role": "member"}, &person, http.StatusCreated); err != nil {
			return err
		}
		people = append(people, person.ID)
		if p.name == "Alex" {
			alexPassword = pw
		}
	}
	s.out.line("people", "Alex and Sam created as members (createPerson)")

	var space, channel idOnly
	if err := s.api.Call(ctx, "createSpace", s.robin, http.MethodPost, "/spaces", map[string]any{"name": spaceName}, &space, http.StatusCreated); err != nil {
		return err
	}
	s.space = space.ID
	for _, id := range people {
		if err := s.api.Call(ctx, "addSpaceMember", s.robin, http.MethodPost, "/spaces/"+s.space+"/members",
			map[string]any{"person_id": id, "level": "write"}, nil, http.StatusCreated); err != nil {
			return err
		}
	}
	if err := s.api.Call(ctx, "createChannel", s.robin, http.MethodPost, "/spaces/"+s.space+"/channels",
		map[string]any{"name": channelName}, &channel, http.StatusCreated); err != nil {
		return err
	}
	s.chann = channel.ID
	s.out.line("space", "%s created with Alex and Sam as members (write) and the channel %s", spaceName, channelName)

	if err := s.registerApp(ctx); err != nil {
		return err
	}
	if err := s.subscribe(ctx); err != nil {
		return err
	}
	if err := s.fetchKeys(ctx); err != nil {
		return err
	}

	var grant idOnly
	if err := s.api.Call(ctx, "createAppGrant", s.robin, http.MethodPost, "/apps/"+s.app+"/grants",
		map[string]any{"space_id": s.space, "channel_id": s.chann, "level": "read"}, &grant, http.StatusCreated); err != nil {
		return err
	}
	s.grant = grant.ID
	s.out.line("grant", "%s may read %s/%s (createAppGrant %s)", appName, spaceName, channelName, s.grant)

	if s.alex, err = s.api.SignIn(ctx, "alex@example.com", alexPassword); err != nil {
		return err
	}
	s.out.line("sign-in", "Alex signed in")
	return nil
}

// registerApp registers Tracker with webhook delivery to the receiver and
// installs it.
func (s *scenario) registerApp(ctx context.Context) error {
	var app idOnly
	manifest := map[string]any{
		"name":        appName,
		"description": "Turns escalations into tickets.",
		"scopes":      []string{"events:subscribe", "messages:read"},
		"events":      []string{eventType},
		"delivery":    map[string]any{"mode": "webhook", "events_url": s.recv.url()},
	}
	if err := s.api.Call(ctx, "createApp", s.robin, http.MethodPost, "/apps", map[string]any{"manifest": manifest}, &app, http.StatusCreated); err != nil {
		return err
	}
	s.app = app.ID
	s.out.line("app", "%s registered (createApp %s): scopes events:subscribe messages:read, events %s, delivery webhook",
		appName, s.app, eventType)
	// The app token is a one-time secret the demo does not need: Tracker
	// only receives events here.
	if err := s.api.Call(ctx, "installApp", s.robin, http.MethodPost, "/apps/"+s.app+"/installation",
		map[string]any{"scopes": []string{"events:subscribe", "messages:read"}, "event_subscriptions": []string{eventType}},
		nil, http.StatusCreated); err != nil {
		return err
	}
	s.out.line("install", "%s installed (installApp); its manifest gave it a subscription to the receiver", appName)
	return nil
}

// subscribe replaces the subscription the install created from the
// manifest (it signs v1a only) by one created with enable_hmac, whose
// create response carries the whsec_ secret once; the receiver keeps it.
func (s *scenario) subscribe(ctx context.Context) error {
	var list struct {
		Items []struct {
			ID               string   `json:"id"`
			SignatureSchemes []string `json:"signature_schemes"`
		} `json:"items"`
	}
	if err := s.api.Call(ctx, "listWebhookSubscriptions", s.robin, http.MethodGet, "/apps/"+s.app+"/webhook-subscriptions", nil, &list, http.StatusOK); err != nil {
		return err
	}
	if len(list.Items) != 1 {
		return fmt.Errorf("the install created %d subscriptions, want 1", len(list.Items))
	}
	manifestSub := list.Items[0]
	if err := s.api.Call(ctx, "deleteWebhookSubscription", s.robin, http.MethodDelete, "/webhook-subscriptions/"+manifestSub.ID, nil, nil, http.StatusNoContent); err != nil {
		return err
	}
	s.out.line("subscribe", "manifest subscription %s (signs %s) deleted, to be replaced by one with HMAC",
		manifestSub.ID, strings.Join(manifestSub.SignatureSchemes, " "))

	var sub struct {
		ID               string   `json:"id"`
		SignatureSchemes []string `json:"signature_schemes"`
		HMACSecret       string   `json:"hmac_secret"`
	}
	if err := s.api.Call(ctx, "createWebhookSubscription", s.robin, http.MethodPost, "/apps/"+s.app+"/webhook-subscriptions",
		map[string]any{"url": s.recv.url(), "event_types": []string{eventType}, "enable_hmac": true}, &sub, http.StatusCreated); err != nil {
		return err
	}
	if err := s.recv.setHMACSecret(sub.HMACSecret); err != nil {
		return err
	}
	s.sub = sub.ID
	s.out.line("subscribe", "subscription %s created with enable_hmac (signs %s); the receiver keeps the whsec_ secret shown once",
		s.sub, strings.Join(sub.SignatureSchemes, " "))
	return nil
}

// fetchKeys gives the receiver the public keys of getWebhookKeys (an
// anonymous call).
func (s *scenario) fetchKeys(ctx context.Context) error {
	var keys struct {
		Keys []struct {
			KID       string `json:"kid"`
			PublicKey string `json:"public_key"`
			State     string `json:"state"`
		} `json:"keys"`
	}
	if err := s.api.Call(ctx, "getWebhookKeys", "", http.MethodGet, "/instance/webhook-keys", nil, &keys, http.StatusOK); err != nil {
		return err
	}
	byKID := map[string]ed25519.PublicKey{}
	var shown []string
	for _, k := range keys.Keys {
		pub, err := parseWebhookKey(k.PublicKey)
		if err != nil {
			return fmt.Errorf("getWebhookKeys: %w", err)
		}
		byKID[k.KID] = pub
		shown = append(shown, short(k.KID)+" "+k.State)
	}
	if len(byKID) == 0 {
		return errors.New("getWebhookKeys published no key")
	}
	s.recv.setKeys(byKID)
	s.out.line("keys", "%d Ed25519 key(s) from GET /api/v1/instance/webhook-keys: %s", len(byKID), strings.Join(shown, ", "))
	return nil
}

// deliver posts texts as Alex and waits until the receiver has verified a
// delivery of each message; it then waits until listWebhookDeliveries
// shows them succeeded.
func (s *scenario) deliver(ctx context.Context, texts []string) ([]delivery, error) {
	for i, text := range texts {
		id, err := s.post(ctx, text)
		if err != nil {
			return nil, err
		}
		s.out.line("post", "Alex posted message %d of %d in %s (postMessage %s)", i+1, len(texts), channelName, id)
	}
	var verified []delivery
	err := waitFor(ctx, s.proc, deliveryWait, "the receiver to verify every delivery", func() (bool, error) {
		verified = verified[:0]
		for _, d := range s.recv.deliveries() {
			if !d.Verified() {
				return false, fmt.Errorf("the receiver refused a delivery: %s", d.Problem)
			}
			if d.Type == eventType && slices.Contains(s.posted, d.ResourceID) && !slices.ContainsFunc(verified, func(v delivery) bool {
				return v.ResourceID == d.ResourceID
			}) {
				verified = append(verified, d)
			}
		}
		return len(verified) == len(s.posted), nil
	})
	if err != nil {
		return nil, err
	}
	for _, d := range verified {
		s.deliveredIDs = append(s.deliveredIDs, d.WebhookID)
	}
	err = waitFor(ctx, s.proc, deliveryWait, "listWebhookDeliveries to show every delivery succeeded", func() (bool, error) {
		rows, err := s.deliveries(ctx)
		if err != nil {
			return false, err
		}
		succeeded := 0
		for _, r := range rows {
			if r.Status == "succeeded" && slices.Contains(s.deliveredIDs, r.EventID) {
				succeeded++
			}
		}
		return succeeded == len(s.deliveredIDs), nil
	})
	if err != nil {
		return nil, err
	}
	s.out.line("status", "listWebhookDeliveries: %d of %d succeeded", len(verified), len(texts))
	return verified, nil
}

// revokeAndPost shows a right revoked between the moment an event becomes
// a delivery and its attempt: Robin pauses the subscription, Alex posts
// text, the delivery appears pending (the worker picked the event up while
// Tracker could see it), Robin revokes Tracker's grant and resumes the
// subscription; listWebhookDeliveries must then show the delivery dead with
// not_authorized, and the receiver must not have seen the event. (An event
// posted after the revocation would leave no delivery at all: deliveries
// are made only for apps that can see the event, D-M2-26-35.)
func (s *scenario) revokeAndPost(ctx context.Context, text string) (deliveryRow, error) {
	if err := s.setSubscriptionState(ctx, "paused"); err != nil {
		return deliveryRow{}, err
	}
	id, err := s.post(ctx, text)
	if err != nil {
		return deliveryRow{}, err
	}
	s.out.line("post", "Alex posted one more message in %s (postMessage %s) while the subscription is paused", channelName, id)
	err = waitFor(ctx, s.proc, deliveryWait, "the delivery of the last message to be created", func() (bool, error) {
		rows, err := s.deliveries(ctx)
		if err != nil {
			return false, err
		}
		for _, r := range rows {
			if !slices.Contains(s.deliveredIDs, r.EventID) && r.Status == "pending" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return deliveryRow{}, err
	}
	if err := s.api.Call(ctx, "deleteAppGrant", s.robin, http.MethodDelete, "/apps/"+s.app+"/grants/"+s.grant, nil, nil, http.StatusNoContent); err != nil {
		return deliveryRow{}, err
	}
	s.out.line("revoke", "grant %s deleted (deleteAppGrant): %s may no longer read %s", s.grant, appName, channelName)
	if err := s.setSubscriptionState(ctx, "active"); err != nil {
		return deliveryRow{}, err
	}

	var dead deliveryRow
	err = waitFor(ctx, s.proc, deliveryWait, "the delivery after the revocation to end", func() (bool, error) {
		rows, err := s.deliveries(ctx)
		if err != nil {
			return false, err
		}
		for _, r := range rows {
			if slices.Contains(s.deliveredIDs, r.EventID) {
				continue
			}
			switch r.Status {
			case "pending":
				return false, nil
			case "dead":
				dead = r
				return true, nil
			default:
				return false, fmt.Errorf("the delivery after the revocation ended %s, want dead", r.Status)
			}
		}
		return false, nil
	})
	if err != nil {
		return dead, err
	}
	if dead.LastError != "not_authorized" {
		return dead, fmt.Errorf("the delivery after the revocation is dead with last_error %q, want not_authorized", dead.LastError)
	}
	for _, d := range s.recv.deliveries() {
		if d.WebhookID == dead.EventID {
			return dead, errors.New("the receiver got the event after the revocation")
		}
	}
	s.out.line("dead", "webhook-id %s %s seq %d: status dead, last_error %s, attempts %d; no request reached the receiver",
		dead.EventID, dead.EventType, dead.EventSeq, dead.LastError, dead.Attempt)
	return dead, nil
}

// setSubscriptionState pauses or resumes the subscription as Robin
// (updateWebhookSubscription).
func (s *scenario) setSubscriptionState(ctx context.Context, state string) error {
	if err := s.api.Call(ctx, "updateWebhookSubscription", s.robin, http.MethodPatch, "/webhook-subscriptions/"+s.sub,
		map[string]any{"state": state}, nil, http.StatusOK); err != nil {
		return err
	}
	s.out.line("subscribe", "subscription %s is %s now", s.sub, state)
	return nil
}

// post posts text in the channel as Alex and remembers the message.
func (s *scenario) post(ctx context.Context, text string) (string, error) {
	var msg idOnly
	if err := s.api.Call(ctx, "postMessage", s.alex, http.MethodPost, "/channels/"+s.chann+"/messages",
		map[string]any{"text": text}, &msg, http.StatusCreated); err != nil {
		return "", err
	}
	s.posted = append(s.posted, msg.ID)
	return msg.ID, nil
}

// deliveries lists the first page of the subscription's deliveries.
func (s *scenario) deliveries(ctx context.Context) ([]deliveryRow, error) {
	var page struct {
		Items []deliveryRow `json:"items"`
	}
	err := s.api.Call(ctx, "listWebhookDeliveries", s.robin, http.MethodGet, "/webhook-subscriptions/"+s.sub+"/deliveries", nil, &page, http.StatusOK)
	return page.Items, err
}

// short returns the first eight characters of an identifier, enough to tell
// keys apart in the log.
func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// printer writes the demo's log: one line per step and per delivery, with
// the seconds since the start. It never writes a token, password, secret
// or signature.
type printer struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
}

// line writes one step.
func (p *printer) line(tag, format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "%6.2fs  %-9s  %s\n", time.Since(p.start).Seconds(), tag, fmt.Sprintf(format, args...))
}

// delivery writes what the receiver saw of one request.
func (p *printer) delivery(d delivery) {
	if d.Verified() {
		p.line("receive", "webhook-id %s %s seq %d: v1 HMAC-SHA256 ok, v1a Ed25519 ok (key %s); answered %d",
			d.WebhookID, d.Type, d.Seq, short(d.V1AKid), d.Status)
		return
	}
	p.line("receive", "webhook-id %s REFUSED: %s (v1 %s, v1a %s); answered %d",
		d.WebhookID, d.Problem, okText(d.V1), okText(d.V1A), d.Status)
}

// okText renders a verification result.
func okText(ok bool) string {
	if ok {
		return "ok"
	}
	return "failed"
}
