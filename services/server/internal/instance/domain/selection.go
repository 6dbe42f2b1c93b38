package domain

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"bothy/server/internal/instance"
)

// Signing returns the keys of one purpose that sign at now, in signing
// order: the active key first, then every retiring key whose not_after lies
// after now, latest not_after first, then by kid. Next and retired keys
// never sign. The result is a new slice; keys is not changed.
func Signing[K Keyed](keys []K, now time.Time) []K {
	var active []K
	var retiring []K
	for _, k := range keys {
		r := k.RuleKey()
		switch {
		case r.State == instance.KeyActive:
			active = append(active, k)
		case r.State == instance.KeyRetiring && r.NotAfter.After(now):
			retiring = append(retiring, k)
		}
	}
	slices.SortStableFunc(retiring, func(a, b K) int {
		ra, rb := a.RuleKey(), b.RuleKey()
		if c := rb.NotAfter.Compare(ra.NotAfter); c != 0 {
			return c
		}
		return strings.Compare(ra.KID, rb.KID)
	})
	return append(active, retiring...)
}

// Published returns the keys that are published (states active, next and
// retiring) ordered active, next, retiring, then by kid: the order of
// getWebhookKeys and of the JWKS. The result is a new slice.
func Published[K Keyed](keys []K) []K {
	var out []K
	for _, k := range keys {
		if publishRank(k.RuleKey().State) >= 0 {
			out = append(out, k)
		}
	}
	slices.SortStableFunc(out, func(a, b K) int {
		ra, rb := a.RuleKey(), b.RuleKey()
		if c := cmp.Compare(publishRank(ra.State), publishRank(rb.State)); c != 0 {
			return c
		}
		return strings.Compare(ra.KID, rb.KID)
	})
	return out
}

// publishRank orders the published states; -1 for a state that is not
// published.
func publishRank(s instance.KeyState) int {
	switch s {
	case instance.KeyActive:
		return 0
	case instance.KeyNext:
		return 1
	case instance.KeyRetiring:
		return 2
	}
	return -1
}

// SigningValidUntil returns until when a signing set computed from keys at
// now may be reused: now + ttl (instance.key_cache_ttl), or the earliest
// not_after after now of a retiring key, if that comes first, because the
// set changes then without any write. A rotation written by another process
// is seen at most ttl late.
func SigningValidUntil[K Keyed](keys []K, now time.Time, ttl time.Duration) time.Time {
	until := now.Add(ttl)
	for _, k := range keys {
		r := k.RuleKey()
		if r.State == instance.KeyRetiring && r.NotAfter.After(now) && r.NotAfter.Before(until) {
			until = r.NotAfter
		}
	}
	return until
}
