package wire

import "bothy/server/internal/platform/config"

// configChecks are the cross conditions between keys (docs/spec/02-architecture.md
// section 13 item 4, "Cross conditions today"). Load runs them after every
// key is valid; each rule names its keys and never a value.
func configChecks() []config.Check {
	return []config.Check{
		durationOrder("webhook_backoff_order", "webhook.retry_backoff_base", atMost, "webhook.retry_backoff_cap", ""),
		durationOrder("webhook_retry_within_retention", "webhook.retry_max_age", below, "sync.event_retention",
			", because a retry needs its event in the log"),
		durationOrder("webhook_attempt_within_retry_age", "webhook.delivery_timeout", below, "webhook.retry_max_age",
			", so a delivery gets an attempt before it expires"),
		durationOrder("jobs_fetch_order", "jobs.fetch_cooldown", atMost, "jobs.fetch_poll_interval",
			", as the job runtime requires"),
		durationOrder("sync_partition_within_retention", "sync.partition_interval", atMost, "sync.event_retention",
			", because retention drops whole partitions"),
		durationOrder("signing_key_publication_window", "agent.jwks_max_age", below, "instance.signing_key_max_age",
			", so a next key is published for that long before it signs"),
		durationOrder("key_cache_within_publication", "instance.key_cache_ttl", below, "agent.jwks_max_age",
			", so a process signs with a promoted key only after every cached key set knows it"),
		durationOrder("database_startup_backoff_order", "database.startup_backoff_initial", atMost, "database.startup_backoff_max", ""),
		durationOrder("step_up_within_session", "identity.step_up_max_age", atMost, "identity.session_ttl", ""),
		{
			Name: "webhook_hosts_without_private",
			Keys: []string{"webhook.allowed_hosts", "egress.allowed_hosts"},
			Rule: "webhook.allowed_hosts entries name host[:port] only; allow_private belongs on egress.allowed_hosts",
			Holds: func(v *config.Values) bool {
				for _, e := range v.HostList("webhook.allowed_hosts") {
					if e.AllowPrivate {
						return false
					}
				}
				return true
			},
		},
		{
			Name: "webhook_chain_within_job_timeout",
			Keys: []string{"webhook.chain_max_duration", "webhook.delivery_timeout", "webhook.lease_record_allowance", "webhook.batch_max_duration", "jobs.job_timeout"},
			Rule: "webhook.chain_max_duration plus webhook.delivery_timeout plus webhook.lease_record_allowance plus webhook.batch_max_duration must be below jobs.job_timeout, so a delivery job ends its chain before the job runtime cancels it",
			Holds: func(v *config.Values) bool {
				return v.Duration("webhook.chain_max_duration")+v.Duration("webhook.delivery_timeout")+
					v.Duration("webhook.lease_record_allowance")+v.Duration("webhook.batch_max_duration") < v.Duration("jobs.job_timeout")
			},
		},
		{
			Name:  "chat_message_within_body",
			Keys:  []string{"chat.message_max_bytes", "http.max_body_bytes"},
			Rule:  "chat.message_max_bytes must be below http.max_body_bytes, so a message of the largest size fits into a request",
			Holds: func(v *config.Values) bool { return v.Bytes("chat.message_max_bytes") < v.Bytes("http.max_body_bytes") },
		},
		{
			Name:  "chat_page_size_order",
			Keys:  []string{"chat.page_size_default", "chat.page_size_max"},
			Rule:  "chat.page_size_default must be at most chat.page_size_max",
			Holds: func(v *config.Values) bool { return v.Int("chat.page_size_default") <= v.Int("chat.page_size_max") },
		},
		{
			Name: "database_lock_within_statement",
			Keys: []string{"database.lock_timeout", "database.statement_timeout"},
			Rule: "database.lock_timeout must be below database.statement_timeout unless that is 0s",
			Holds: func(v *config.Values) bool {
				st := v.Duration("database.statement_timeout")
				return st == 0 || v.Duration("database.lock_timeout") < st
			},
		},
		{
			Name: "http_listeners_distinct",
			Keys: []string{"http.listen_address", "http.operator_listen_address"},
			Rule: "http.listen_address and http.operator_listen_address must differ",
			Holds: func(v *config.Values) bool {
				return v.String("http.listen_address") != v.String("http.operator_listen_address")
			},
		},
	}
}

// order is the comparison of durationOrder.
type order string

const (
	below  order = "below"
	atMost order = "at most"
)

// durationOrder is the check "lower must be below (or at most) upper",
// with an optional reason appended to the rule.
func durationOrder(name, lower string, o order, upper, reason string) config.Check {
	return config.Check{
		Name: name,
		Keys: []string{lower, upper},
		Rule: lower + " must be " + string(o) + " " + upper + reason,
		Holds: func(v *config.Values) bool {
			a, b := v.Duration(lower), v.Duration(upper)
			return a < b || (o == atMost && a == b)
		},
	}
}
