// Package domain holds the pure rules of the sync module's event log, with
// no I/O: PrepareAppend checks an event against the event catalogue and
// normalizes its payload (NormalizePayload: one object, no null, canonical
// ids, text cut to sync.payload_text_max_bytes; a payload built of maps and
// plain values on its Go values, with the same result), and PlanRound plans one
// consumer round from a cursor (the lost range, where to read, the next
// cursor). Its errors are *errs.Error sentinels compared with errors.Is.
package domain
