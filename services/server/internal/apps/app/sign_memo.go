package app

import (
	"crypto/sha256"
	"sync"

	"bothy/server/internal/instance"
	"bothy/server/internal/kernel/ids"
)

// signatureMemo remembers the v1a signatures a worker made in the newest
// second and the one before it (ADR 0101). The deliveries of one event to
// many subscriptions in one second sign the same content (its webhook-id,
// the attempt's second and the event's envelope) with the same keys, and
// an Ed25519 signature depends only on the key and the content, so the
// first delivery's signature serves the others: the worker signs once per
// event, key and second instead of once per delivery. An entry is used
// only for content with the SHA-256 of what it signed; it keeps the
// digest, not the content, so a worker that delivers each event once
// (fleet, a backlog's drain) holds about a hundred bytes per delivery of
// two seconds, not its body. The seconds of the webhook-timestamp bound
// what is kept: nothing older than the second before the newest. A nil
// memo signs every time. It is safe for concurrent use.
type signatureMemo struct {
	mu sync.Mutex
	// newest is the latest second signed; current holds its entries,
	// previous those of the second before it.
	newest            int64
	current, previous map[memoKey]memoEntry
}

// memoKey names the signature of one event by one key in one second.
type memoKey struct {
	kid    string
	event  ids.ID
	second int64
}

// memoEntry is a signature and the SHA-256 of the content it signs.
type memoEntry struct {
	digest [sha256.Size]byte
	sig    []byte
}

// sign returns the signature of content, the signed content of event at
// second, by sg: the remembered one when sg signed the same content
// before within the kept seconds, else a new one, which it remembers. The
// returned slice is shared; callers only read it.
func (m *signatureMemo) sign(sg instance.Signer, event ids.ID, second int64, content []byte) []byte {
	if m == nil {
		return sg.Sign(content)
	}
	k := memoKey{kid: sg.KeyID(), event: event, second: second}
	digest := sha256.Sum256(content)
	m.mu.Lock()
	e, ok := m.current[k]
	if !ok {
		e, ok = m.previous[k]
	}
	m.mu.Unlock()
	if ok && e.digest == digest {
		return e.sig
	}
	sig := sg.Sign(content)
	m.mu.Lock()
	m.keep(k, memoEntry{digest: digest, sig: sig})
	m.mu.Unlock()
	return sig
}

// keep remembers e under k when k's second is the newest or the one
// before it; a later second becomes the newest, and the seconds before
// the one before it are dropped. The caller holds mu.
func (m *signatureMemo) keep(k memoKey, e memoEntry) {
	switch {
	case k.second > m.newest:
		if k.second == m.newest+1 {
			m.previous = m.current
		} else {
			m.previous = nil
		}
		m.current, m.newest = map[memoKey]memoEntry{}, k.second
	case k.second < m.newest-1:
		return
	}
	if k.second == m.newest {
		m.current[k] = e
		return
	}
	if m.previous == nil {
		m.previous = map[memoKey]memoEntry{}
	}
	m.previous[k] = e
}
