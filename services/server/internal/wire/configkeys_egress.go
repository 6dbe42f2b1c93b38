package wire

import (
	"time"

	"bothy/server/internal/kernel/hostlist"
	"bothy/server/internal/platform/config"
)

// egressConfigKeys are the keys of the egress client that every outgoing
// connection goes through (SEC-NET-1 to SEC-NET-5).
func egressConfigKeys() []config.Key {
	return []config.Key{
		{Name: "egress.allowed_hosts", Kind: config.KindHostList, Chapter: chapter19,
			Doc: "Operator entries host[:port][;allow_private]; only an entry with ;allow_private lets its host resolve to a loopback, private or link-local address."},
		{Name: "egress.timeout", Kind: config.KindDuration, Default: "10s", Min: "0s", MinExclusive: true, Max: "5m", Chapter: chapter19,
			Doc: "Time limit of one outgoing request, from dialling to the last byte read, when the caller sets no shorter one."},
		{Name: "egress.max_response_bytes", Kind: config.KindByteSize, Default: "64KiB", Min: "1KiB", Max: "16MiB", Chapter: chapter19,
			Doc: "Most bytes of a response body the egress client reads; the rest is discarded unread."},
		{Name: "egress.max_idle_conns_per_host", Kind: config.KindInt, Unit: "connections", Default: "100", Min: "1", Max: "10000", Chapter: chapter19,
			Doc: "Idle connections the egress client keeps per host:port for reuse; keep it at least the deliveries one worker sends to one host at once (up to jobs.queue.delivery.max_workers times webhook.run_max_subscriptions when the subscriptions of a round share the host, ADR 0089), or concurrent deliveries to one HTTP/1.1 host open a new connection and TLS handshake each."},
		{Name: "egress.idle_conn_timeout", Kind: config.KindDuration, Default: "90s", Min: "1s", Max: "1h", Chapter: chapter19,
			Doc: "How long a pooled outgoing connection may stay unused before the egress client closes it."},
		{Name: "egress.extra_ca_file", Kind: config.KindPath, Optional: true, Chapter: chapter19,
			Doc: "PEM file of extra trusted certificate authorities for outgoing TLS (test receivers, the demo); empty trusts the system roots only. Re-read every egress.extra_ca_check_interval and on SIGHUP."},
		{Name: "egress.extra_ca_check_interval", Kind: config.KindDuration, Default: "30s", Min: "1s", Max: "1h", Chapter: chapter19,
			Doc: "How often a process checks egress.extra_ca_file for a change; a changed file that holds certificates is trusted from the next connection on."},
	}
}

// EgressConfig holds the egress client settings.
type EgressConfig struct {
	// AllowedHosts is egress.allowed_hosts.
	AllowedHosts hostlist.List `config:"egress.allowed_hosts"`
	// Timeout is egress.timeout.
	Timeout time.Duration `config:"egress.timeout"`
	// MaxResponseBytes is egress.max_response_bytes.
	MaxResponseBytes int64 `config:"egress.max_response_bytes"`
	// MaxIdleConnsPerHost is egress.max_idle_conns_per_host.
	MaxIdleConnsPerHost int `config:"egress.max_idle_conns_per_host"`
	// IdleConnTimeout is egress.idle_conn_timeout.
	IdleConnTimeout time.Duration `config:"egress.idle_conn_timeout"`
	// ExtraCAFile is egress.extra_ca_file; empty means none.
	ExtraCAFile string `config:"egress.extra_ca_file"`
	// ExtraCACheckInterval is egress.extra_ca_check_interval.
	ExtraCACheckInterval time.Duration `config:"egress.extra_ca_check_interval"`
}
