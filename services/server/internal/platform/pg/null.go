package pg

import "time"

// NullTime maps the zero time to SQL NULL (nil) and any other time to a
// pointer to it: the form sqlc gives a nullable timestamptz parameter. It is
// the one such mapping of the adapters (D-CL-12); a read maps NULL back with
// a plain nil check where the zero time means "never".
func NullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
