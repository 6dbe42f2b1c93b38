package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"bothy/server/cmd/internal/localrun"
)

// receiverHost is the host name of the benchmark's receiver. The bothy
// processes run as an operator runs them, with the system resolver, which
// answers localhost from /etc/hosts with 127.0.0.1; the receiver's
// certificate names it, and egress.allowed_hosts lets it through with
// ;allow_private.
const receiverHost = "localhost"

// receiverPathPrefix starts the path of every app's events_url; the app's
// index follows, so the receiver tells subscriptions apart.
const receiverPathPrefix = "/hook/"

// receiverMaxBody is the largest body the receiver reads; a delivery of
// the benchmark is about 1 KiB.
const receiverMaxBody = 1 << 20

// receiver is the benchmark's HTTPS webhook receiver on 127.0.0.1. It
// answers 204 delay after a delivery arrived, at once by default (it does
// not verify signatures: make demo does, and a verification would spend
// the CPU the processes under test share), except for the app hung, whose
// requests it holds until the sender gives up (webhook.delivery_timeout)
// or the scenario ends. It counts what arrives with a tally.
type receiver struct {
	*localrun.HTTPSServer
	// delay is how long it takes to answer a delivery (-receiver-delay):
	// a receiver across a network that does some work before it answers.
	// The arrival counts when the request is read, before the delay.
	delay time.Duration

	mu       sync.Mutex
	hung     int           // app index whose requests hang; -1 none
	release  chan struct{} // closed to let hung requests go
	tally    tally
	arrivals []arrival // the new arrivals (no duplicates) in arrival order
	hungSeen int       // requests of the hung app
	refused  int       // requests the receiver could not read
}

// newReceiver issues a certificate for receiverHost from a CA made for
// this run and listens on 127.0.0.1 and a free port
// (localrun.NewHTTPSServer); Start serves. It answers each delivery delay
// after it arrived.
func newReceiver(delay time.Duration) (*receiver, error) {
	r := &receiver{hung: -1, release: make(chan struct{}), delay: delay}
	srv, err := localrun.NewHTTPSServer("bothy bench CA", receiverHost, http.HandlerFunc(r.serve))
	if err != nil {
		return nil, err
	}
	r.HTTPSServer = srv
	return r, nil
}

// stop lets hung requests go, then closes the listener and every
// connection.
func (r *receiver) stop(ctx context.Context) {
	r.reset(-1)
	r.Stop(ctx)
}

// hostPort is receiverHost with the receiver's port, the form of
// webhook.allowed_hosts and egress.allowed_hosts entries.
func (r *receiver) hostPort() string { return net.JoinHostPort(receiverHost, strconv.Itoa(r.Port)) }

// url is the events_url of app i.
func (r *receiver) url(i int) string {
	return "https://" + r.hostPort() + receiverPathPrefix + strconv.Itoa(i)
}

// reset forgets every arrival, lets requests still hanging go, and makes
// the requests of app hung hang from now on (-1: none).
func (r *receiver) reset(hung int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	close(r.release)
	r.release = make(chan struct{})
	r.hung = hung
	r.tally = tally{}
	r.arrivals = nil
	r.hungSeen, r.refused = 0, 0
}

// counts returns the counters so far: distinct deliveries, duplicates,
// order violations, requests of the hung app and unreadable requests.
func (r *receiver) counts() (unique, duplicates, violations, hungSeen, refused int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tally.unique, r.tally.duplicates, r.tally.violations, r.hungSeen, r.refused
}

// taken returns the new arrivals so far, in arrival order.
func (r *receiver) taken() []arrival {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]arrival(nil), r.arrivals...)
}

// serve records one request and answers 204 after the receiver's delay,
// or holds it when it belongs to the hung app.
func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	at := time.Now()
	sub, err := strconv.Atoi(strings.TrimPrefix(req.URL.Path, receiverPathPrefix))
	body, rerr := io.ReadAll(io.LimitReader(req.Body, receiverMaxBody))
	a, perr := parseDelivery(req.Header.Get("webhook-id"), body)
	r.mu.Lock()
	if err != nil || !strings.HasPrefix(req.URL.Path, receiverPathPrefix) || rerr != nil || perr != nil {
		r.refused++
		r.mu.Unlock()
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if sub == r.hung {
		r.hungSeen++
		release := r.release
		r.mu.Unlock()
		// Hold the request until the sender gives up or the scenario
		// ends; it never counts as delivered.
		select {
		case <-req.Context().Done():
			// The sender gave up: no answer at all, not even one that a
			// transport still reading could take for the receiver's. The
			// abort closes the connection without a response.
			panic(http.ErrAbortHandler)
		case <-release:
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	a.Sub, a.At = sub, at
	if r.tally.add(a) {
		r.arrivals = append(r.arrivals, a)
	}
	r.mu.Unlock()
	if r.delay > 0 {
		t := time.NewTimer(r.delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-req.Context().Done():
			// The sender gave up before the answer; as for the hung app,
			// no answer at all.
			panic(http.ErrAbortHandler)
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// parseDelivery reads what the tally needs of a delivery: the webhook-id
// header and, from the body (the event envelope), seq and resource.id.
// It fails when the header is missing or the body is not an envelope.
func parseDelivery(webhookID string, body []byte) (arrival, error) {
	var env struct {
		Seq      int64 `json:"seq"`
		Resource struct {
			ID string `json:"id"`
		} `json:"resource"`
	}
	if webhookID == "" {
		return arrival{}, fmt.Errorf("no webhook-id")
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return arrival{}, fmt.Errorf("body: %w", err)
	}
	if env.Seq <= 0 || env.Resource.ID == "" {
		return arrival{}, fmt.Errorf("body: no seq or resource.id")
	}
	return arrival{WebhookID: webhookID, Seq: env.Seq, MessageID: env.Resource.ID}, nil
}
