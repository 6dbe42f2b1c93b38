package localrun

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// RequestTimeout bounds one request of a Client; the caller's context
// bounds the whole walk.
const RequestTimeout = 15 * time.Second

// maxAnswer is the largest answer body a Client reads; the API's answers
// are far smaller.
const maxAnswer = 1 << 20

// Client calls the public HTTP API of a bothy process over 127.0.0.1, with
// real requests and bearer tokens, like any client would. It is safe for
// concurrent use.
type Client struct {
	base   string // http://127.0.0.1:<port>
	client *http.Client
}

// NewClient returns a client of the API listening on addr (host:port).
// maxConns is the number of idle connections it keeps to the API (at
// least 2), so concurrent callers reuse their connections.
func NewClient(addr string, maxConns int) *Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = max(maxConns, 2)
	tr.MaxIdleConnsPerHost = max(maxConns, 2)
	return &Client{base: "http://" + addr, client: &http.Client{Timeout: RequestTimeout, Transport: tr}}
}

// Close closes the idle connections of c.
func (c *Client) Close() { c.client.CloseIdleConnections() }

// problem is the part of an application/problem+json answer a caller
// reports: never a value the caller sent.
type problem struct {
	Code   string `json:"code"`
	Reason string `json:"reason"`
	Errors []struct {
		Pointer string `json:"pointer"`
		Code    string `json:"code"`
	} `json:"errors"`
}

// Call sends method path (below /api/v1) as operation op with body as JSON
// (none when nil) and the bearer token (none when empty). The answer must
// have status want; its JSON body is decoded into out when out is not nil.
// An error names the operation, the status and the problem code, reason
// and field pointers, never a token or a body.
func (c *Client) Call(ctx context.Context, op, token, method, path string, body, out any, want int) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("%s: encoding the request: %w", op, err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+"/api/v1"+path, rd)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("%s: reading the answer: %w", op, err)
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s answered %d %s, want %d", op, resp.StatusCode, DescribeProblem(raw), want)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("%s: decoding the answer: %w", op, err)
		}
	}
	return nil
}

// DescribeProblem renders the code, reason and field errors of a problem
// answer ("validation_failed (/url: https_required)"); an answer that is
// not a problem gives "".
func DescribeProblem(raw []byte) string {
	var p problem
	if json.Unmarshal(raw, &p) != nil || p.Code == "" {
		return ""
	}
	var parts []string
	if p.Reason != "" {
		parts = append(parts, p.Reason)
	}
	for _, f := range p.Errors {
		parts = append(parts, f.Pointer+": "+f.Code)
	}
	if len(parts) == 0 {
		return p.Code
	}
	return p.Code + " (" + strings.Join(parts, ", ") + ")"
}

// Ready reports whether the process answers GET /readyz with 200.
func (c *Client) Ready(ctx context.Context) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/readyz", nil)
	if err != nil {
		return false
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// SignIn opens a session (createSession) for email and password and
// returns its bearer token; a sign-in counts as a fresh step-up.
func (c *Client) SignIn(ctx context.Context, email, password string) (string, error) {
	var sess struct {
		Token string `json:"token"`
	}
	err := c.Call(ctx, "createSession", "", http.MethodPost, "/sessions", map[string]any{"email": email, "password": password}, &sess, http.StatusCreated)
	return sess.Token, err
}
