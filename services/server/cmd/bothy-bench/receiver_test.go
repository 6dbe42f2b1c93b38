package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testSender is an HTTPS client that trusts only the receiver's CA and
// dials 127.0.0.1 for receiverHost, as the egress client does with the
// allow_private entry.
func testSender(t *testing.T, r *receiver) *http.Client {
	t.Helper()
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(r.CAPEM))
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", strconv.Itoa(r.Port)))
		},
	}}
}

func startTestReceiver(t *testing.T) *receiver {
	t.Helper()
	return startTestReceiverAnsweringAfter(t, 0)
}

// startTestReceiverAnsweringAfter starts a receiver that answers each
// delivery delay after it arrived (-receiver-delay).
func startTestReceiverAnsweringAfter(t *testing.T, delay time.Duration) *receiver {
	t.Helper()
	r, err := newReceiver(delay)
	require.NoError(t, err)
	r.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r.stop(ctx)
	})
	return r
}

// send posts one delivery of event id with seq to app i and returns the
// status.
func send(ctx context.Context, t *testing.T, c *http.Client, r *receiver, i int, id string, seq int64) (int, error) {
	t.Helper()
	body := fmt.Sprintf(`{"id":%q,"seq":%d,"type":"message.created","resource":{"kind":"message","id":"m-%d"}}`, id, seq, seq)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url(i), bytes.NewBufferString(body))
	require.NoError(t, err)
	req.Header.Set("webhook-id", id)
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

func TestReceiverCountsDeliveriesPerSubscriptionOverTLS(t *testing.T) {
	t.Parallel()
	r := startTestReceiver(t)
	c := testSender(t, r)
	ctx := context.Background()
	for _, d := range []struct {
		app int
		id  string
		seq int64
	}{{1, "e1", 1}, {1, "e2", 2}, {2, "e1", 1}, {1, "e2", 2}, {2, "e0", 0}} {
		code, err := send(ctx, t, c, r, d.app, d.id, d.seq)
		require.NoError(t, err)
		if d.seq == 0 {
			require.Equal(t, http.StatusBadRequest, code, "a body without seq is not a delivery")
			continue
		}
		require.Equal(t, http.StatusNoContent, code)
	}
	unique, dups, violations, hung, refused := r.counts()
	require.Equal(t, 3, unique)
	require.Equal(t, 1, dups)
	require.Equal(t, 0, violations)
	require.Equal(t, 0, hung)
	require.Equal(t, 1, refused)
	got := r.taken()
	require.Len(t, got, 3)
	require.Equal(t, "m-1", got[0].MessageID)
	require.Equal(t, 1, got[0].Sub)
	require.False(t, got[0].At.IsZero())
}

func TestReceiverAnswersAfterItsDelayAndCountsTheArrival(t *testing.T) {
	t.Parallel()
	const delay = 300 * time.Millisecond
	r := startTestReceiverAnsweringAfter(t, delay)
	c := testSender(t, r)
	_, err := send(context.Background(), t, c, r, 1, "e0", 1) // the connection, so the next request times the answer alone
	require.NoError(t, err)
	sent := time.Now()
	code, err := send(context.Background(), t, c, r, 1, "e1", 2)
	answered := time.Now()
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, code)
	require.GreaterOrEqual(t, answered.Sub(sent), delay, "the answer waits for the receiver's delay")
	got := r.taken()
	require.Len(t, got, 2)
	require.Less(t, got[1].At.Sub(sent), delay, "the arrival is counted when the request is read, before the delay")

	ctx, cancel := context.WithTimeout(context.Background(), delay/3)
	defer cancel()
	_, err = send(ctx, t, c, r, 1, "e2", 3)
	require.ErrorIs(t, err, context.DeadlineExceeded, "a sender that gives up first gets no answer")
	unique, _, _, _, _ := r.counts()
	require.Equal(t, 3, unique, "a delivery counts when it arrives, whatever the sender does then")
}

func TestReceiverHoldsTheHungAppUntilTheSenderGivesUp(t *testing.T) {
	t.Parallel()
	r := startTestReceiver(t)
	r.reset(0)
	c := testSender(t, r)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	code, err := send(ctx, t, c, r, 0, "e1", 1)
	require.ErrorIs(t, err, context.DeadlineExceeded, "the request hangs until the sender's deadline (answered %d)", code)
	code, err = send(context.Background(), t, c, r, 1, "e1", 1)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, code, "the other apps are answered at once")
	unique, _, _, hung, _ := r.counts()
	require.Equal(t, 1, unique, "a hung request is never a delivery")
	require.Equal(t, 1, hung)
}

func TestReceiverResetLetsHungRequestsGo(t *testing.T) {
	t.Parallel()
	r := startTestReceiver(t)
	r.reset(0)
	c := testSender(t, r)
	done := make(chan int, 1)
	go func() {
		code, _ := send(context.Background(), t, c, r, 0, "e1", 1)
		done <- code
	}()
	require.Eventually(t, func() bool { _, _, _, hung, _ := r.counts(); return hung == 1 }, 5*time.Second, 5*time.Millisecond)
	r.reset(-1)
	require.Equal(t, http.StatusServiceUnavailable, <-done)
}

func TestParseDeliveryRefusesWhatIsNoEnvelope(t *testing.T) {
	t.Parallel()
	a, err := parseDelivery("e1", []byte(`{"seq":7,"resource":{"id":"m"}}`))
	require.NoError(t, err)
	require.Equal(t, arrival{WebhookID: "e1", Seq: 7, MessageID: "m"}, a)
	for _, c := range []struct{ id, body string }{
		{"", `{"seq":7,"resource":{"id":"m"}}`},
		{"e1", `not json`},
		{"e1", `{"seq":7}`},
		{"e1", `{"resource":{"id":"m"}}`},
	} {
		_, err := parseDelivery(c.id, []byte(c.body))
		require.Error(t, err, c)
	}
}
