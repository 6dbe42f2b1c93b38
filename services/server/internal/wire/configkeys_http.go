package wire

import (
	"time"

	"bothy/server/internal/platform/config"
)

// httpConfigKeys are the keys of the two HTTP listeners and the rate limits
// of the public API.
func httpConfigKeys() []config.Key {
	return []config.Key{
		{Name: "http.listen_address", Kind: config.KindAddress, Default: "127.0.0.1:8080", Chapter: chapter06,
			Doc: "Address of the public API listener (roles api and all)."},
		{Name: "http.operator_listen_address", Kind: config.KindAddress, Default: "127.0.0.1:9090", Chapter: chapter02,
			Doc: "Address of the operator listener with metrics and health endpoints, in every role; keep it off the public network."},
		{Name: "http.read_header_timeout", Kind: config.KindDuration, Default: "10s", Min: "0s", MinExclusive: true, Max: "5m", Chapter: chapter06,
			Doc: "Time a client has to send the request headers, against slow-header attacks."},
		{Name: "http.request_timeout", Kind: config.KindDuration, Default: "30s", Min: "1s", Max: "10m", Chapter: chapter06,
			Doc: "Deadline of the work behind one API request; a handler past it is cancelled and its unit of work rolled back."},
		{Name: "http.readiness_timeout", Kind: config.KindDuration, Default: "2s", Min: "100ms", Max: "1m", Chapter: chapter02,
			Doc: "Time /readyz waits for the database before it answers 503."},
		{Name: "http.max_body_bytes", Kind: config.KindByteSize, Default: "1MiB", Min: "1KiB", Max: "64MiB", Chapter: chapter06,
			Doc: "Largest request body the API reads (the limit of every operation outside a smaller class); a larger one is answered with 413 payload_too_large."},
		{Name: "http.max_body_bytes_public_auth", Kind: config.KindByteSize, Default: "16KiB", Min: "1KiB", Max: "64MiB", Chapter: chapter06,
			Doc: "Largest request body of the operations of the rate limit class public_auth (sign-in, step-up, discovery), which anyone may call; http.max_body_bytes still applies when it is smaller."},
		{Name: "http.unavailable_retry_after", Kind: config.KindDuration, Default: "5s", Min: "1s", Max: "10m", Chapter: chapter06,
			Doc: "Retry-After of a 503 unavailable answer, given while the database cannot be reached (connection refused, administrator shutdown, failover); whole seconds, rounded up."},
		{Name: "http.shutdown_timeout", Kind: config.KindDuration, Default: "30s", Min: "0s", MinExclusive: true, Max: "10m", Chapter: chapter02,
			Doc: "Time in-flight requests get to finish after SIGTERM before the listeners close them."},
		{Name: "http.drain_delay", Kind: config.KindDuration, Default: "5s", Min: "0s", Max: "10m", Chapter: chapter02,
			Doc: "Time the API listener keeps serving after SIGTERM while /readyz already answers 503, so a load balancer takes the process out before it stops accepting; roles api and all."},
		{Name: "http.cursor_key_ref", Kind: config.KindSecretRef, Default: "file:<secrets.dir>/http_cursor_key", Chapter: chapter06,
			Doc: "Reference to the key that authenticates pagination cursors (docs/spec/06-api.md section 6)."},
		{Name: "idempotency.key_ttl", Kind: config.KindDuration, Default: "24h", Min: "1m", Max: "30d", Chapter: chapter06,
			Doc: "How long a stored Idempotency-Key answers replays before maintenance removes it."},
		{Name: "ratelimit.public_auth.per_minute", Kind: config.KindInt, Default: "30", Min: "1", Max: "100000", Unit: "requests", Chapter: chapter06,
			Doc: "Sustained requests per minute and client address in the rate limit class public_auth (sign-in, step-up, public discovery)."},
		{Name: "ratelimit.public_auth.burst", Kind: config.KindInt, Default: "10", Min: "1", Max: "10000", Unit: "requests", Chapter: chapter06,
			Doc: "Requests a client address may make at once in the class public_auth before ratelimit.public_auth.per_minute applies."},
	}
}

// HTTPConfig holds the listener settings.
type HTTPConfig struct {
	// ListenAddress is http.listen_address.
	ListenAddress string `config:"http.listen_address"`
	// OperatorListenAddress is http.operator_listen_address.
	OperatorListenAddress string `config:"http.operator_listen_address"`
	// ReadHeaderTimeout is http.read_header_timeout.
	ReadHeaderTimeout time.Duration `config:"http.read_header_timeout"`
	// MaxBodyBytes is http.max_body_bytes.
	MaxBodyBytes int64 `config:"http.max_body_bytes"`
	// MaxBodyBytesPublicAuth is http.max_body_bytes_public_auth.
	MaxBodyBytesPublicAuth int64 `config:"http.max_body_bytes_public_auth"`
	// UnavailableRetryAfter is http.unavailable_retry_after.
	UnavailableRetryAfter time.Duration `config:"http.unavailable_retry_after"`
	// ShutdownTimeout is http.shutdown_timeout.
	ShutdownTimeout time.Duration `config:"http.shutdown_timeout"`
	// DrainDelay is http.drain_delay.
	DrainDelay time.Duration `config:"http.drain_delay"`
	// RequestTimeout is http.request_timeout.
	RequestTimeout time.Duration `config:"http.request_timeout"`
	// ReadinessTimeout is http.readiness_timeout.
	ReadinessTimeout time.Duration `config:"http.readiness_timeout"`
	// CursorKeyRef is http.cursor_key_ref, placeholders resolved.
	CursorKeyRef string `config:"http.cursor_key_ref"`
	// IdempotencyKeyTTL is idempotency.key_ttl.
	IdempotencyKeyTTL time.Duration `config:"idempotency.key_ttl"`
}

// RateLimitConfig holds the rate limit classes.
type RateLimitConfig struct {
	// PublicAuth is the class public_auth.
	PublicAuth struct {
		// PerMinute is ratelimit.public_auth.per_minute.
		PerMinute int `config:"ratelimit.public_auth.per_minute"`
		// Burst is ratelimit.public_auth.burst.
		Burst int `config:"ratelimit.public_auth.burst"`
	}
}
