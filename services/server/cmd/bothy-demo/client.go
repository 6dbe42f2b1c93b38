package main

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

// apiRequestTimeout bounds one request of the demo's API client; the
// overall --timeout bounds the demo.
const apiRequestTimeout = 15 * time.Second

// apiClient calls the public HTTP API of the demo's process over
// 127.0.0.1, with real requests and bearer tokens, like any client would.
type apiClient struct {
	base   string // http://127.0.0.1:<port>
	client *http.Client
}

// newAPIClient returns a client of the API listening on addr (host:port).
func newAPIClient(addr string) *apiClient {
	return &apiClient{base: "http://" + addr, client: &http.Client{Timeout: apiRequestTimeout}}
}

// problem is the part of an application/problem+json answer the demo
// reports: never a value the caller sent.
type problem struct {
	Code   string `json:"code"`
	Reason string `json:"reason"`
	Errors []struct {
		Pointer string `json:"pointer"`
		Code    string `json:"code"`
	} `json:"errors"`
}

// call sends method path (below /api/v1) as operation op with body as JSON
// (none when nil) and the bearer token (none when empty). The answer must
// have status want; its JSON body is decoded into out when out is not nil.
// An error names the operation, the status and the problem code, reason
// and field pointers, never a token or a body.
func (a *apiClient) call(ctx context.Context, op, token, method, path string, body, out any, want int) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("%s: encoding the request: %w", op, err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+"/api/v1"+path, rd)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%s: reading the answer: %w", op, err)
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s answered %d %s, want %d", op, resp.StatusCode, describeProblem(raw), want)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("%s: decoding the answer: %w", op, err)
		}
	}
	return nil
}

// describeProblem renders the code, reason and field errors of a problem
// answer ("validation_failed (/url: https_required)"); an answer that is
// not a problem gives "".
func describeProblem(raw []byte) string {
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

// ready reports whether the process answers GET /readyz with 200.
func (a *apiClient) ready(ctx context.Context) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+"/readyz", nil)
	if err != nil {
		return false
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
