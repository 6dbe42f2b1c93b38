package domain_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/sync/domain"
)

func TestPlanRound(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                string
		cursor, minRetained int64
		batch               int
		want                domain.Plan
		lost                bool
		lastRead            int64
		read                int
		wantNext            int64
	}{
		{name: "a consumer at the head of an empty log loses nothing",
			cursor: 0, minRetained: 1, batch: 10,
			want: domain.Plan{After: 0, Limit: 10}, wantNext: 0},
		{name: "a consumer inside the retained log reads after its cursor",
			cursor: 5, minRetained: 3, batch: 10,
			want: domain.Plan{After: 5, Limit: 10}, lastRead: 9, read: 4, wantNext: 9},
		{name: "a cursor just below the retained log loses nothing",
			cursor: 4, minRetained: 5, batch: 2,
			want: domain.Plan{After: 4, Limit: 2}, lastRead: 6, read: 2, wantNext: 6},
		{name: "a cursor behind retention reports the lost range",
			cursor: 2, minRetained: 10, batch: 5,
			want: domain.Plan{LostFrom: 3, LostTo: 9, After: 9, Limit: 5}, lost: true, lastRead: 12, read: 3, wantNext: 12},
		{name: "after a loss with nothing left the cursor moves past the lost range",
			cursor: 0, minRetained: 8, batch: 5,
			want: domain.Plan{LostFrom: 1, LostTo: 7, After: 7, Limit: 5}, lost: true, wantNext: 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := domain.PlanRound(tc.cursor, tc.minRetained, tc.batch)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.lost, got.Lost())
			require.Equal(t, tc.wantNext, got.NextCursor(tc.lastRead, tc.read))
		})
	}
}

func TestPlanRoundRejectsImpossibleInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                string
		cursor, minRetained int64
		batch               int
	}{
		{"a negative cursor", -1, 1, 10},
		{"a minimum retained seq below one", 0, 0, 10},
		{"a batch size of zero", 0, 1, 0},
		{"a negative batch size", 0, 1, -3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := domain.PlanRound(tc.cursor, tc.minRetained, tc.batch)
			require.ErrorIs(t, err, domain.ErrPlanInput)
		})
	}
}

// FuzzPlanRound checks the invariants of a plan for any valid input: the
// read starts at or after the cursor and right below the retained log, a
// lost range is reported exactly when the cursor is behind it and is
// contiguous with the read, and the next cursor never moves backwards.
func FuzzPlanRound(f *testing.F) {
	// Seeds: an empty log, a consumer ahead, a consumer just behind, a loss.
	f.Add(int64(0), int64(1), 10, int64(0), 0)
	f.Add(int64(5), int64(3), 10, int64(9), 4)
	f.Add(int64(4), int64(5), 2, int64(6), 2)
	f.Add(int64(2), int64(10), 5, int64(12), 3)
	f.Fuzz(func(t *testing.T, cursor, minRetained int64, batch int, lastRead int64, read int) {
		p, err := domain.PlanRound(cursor, minRetained, batch)
		if cursor < 0 || minRetained < 1 || batch < 1 {
			require.ErrorIs(t, err, domain.ErrPlanInput)
			return
		}
		require.NoError(t, err)
		require.GreaterOrEqual(t, p.After, cursor)
		require.GreaterOrEqual(t, p.After, minRetained-1)
		require.Equal(t, batch, p.Limit)
		require.Equal(t, cursor+1 < minRetained, p.Lost())
		if p.Lost() {
			require.Equal(t, cursor+1, p.LostFrom)
			require.Equal(t, p.After, p.LostTo)
		}
		if read > 0 && lastRead > p.After {
			require.Equal(t, lastRead, p.NextCursor(lastRead, read))
		} else {
			require.Equal(t, p.After, p.NextCursor(lastRead, 0))
		}
	})
}
