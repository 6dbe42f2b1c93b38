package domain_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/sync/domain"
)

func TestSettle(t *testing.T) {
	t.Parallel()
	const round = 900 // the round's own xid
	old := domain.Horizon{XID: 500, Through: 8}
	for _, tc := range []struct {
		name     string
		after    int64
		seqs     []int64
		stored   domain.Horizon
		settled  bool
		roundXID uint64
		want     domain.Settlement
	}{
		{name: "contiguous events are all handled",
			after: 4, seqs: []int64{5, 6, 7}, roundXID: round,
			want: domain.Settlement{Handle: 3}},
		{name: "nothing read, nothing to do",
			after: 4, roundXID: round,
			want: domain.Settlement{}},
		{name: "a gap holds back what follows and the round keeps its horizon",
			after: 4, seqs: []int64{5, 7, 8}, roundXID: round,
			want: domain.Settlement{Handle: 1, Held: true, Horizon: domain.Horizon{XID: round, Through: 8}}},
		{name: "a gap right after the cursor holds back everything",
			after: 4, seqs: []int64{6}, roundXID: round,
			want: domain.Settlement{Held: true, Horizon: domain.Horizon{XID: round, Through: 6}}},
		{name: "a round that cannot vouch for its xid keeps no horizon",
			after: 4, seqs: []int64{6},
			want: domain.Settlement{Held: true}},
		{name: "no horizon and no xid: as far as the seqs follow one by one, nothing kept (a recent read, ADR 0105)",
			after: 7, seqs: []int64{8, 9, 11},
			want: domain.Settlement{Handle: 2, Held: true}},
		{name: "an unsettled horizon is kept and still holds back",
			after: 4, seqs: []int64{6, 7}, stored: old, roundXID: round,
			want: domain.Settlement{Held: true, Horizon: old}},
		{name: "a settled horizon lets the round pass its gaps and is dropped",
			after: 4, seqs: []int64{6, 8, 9}, stored: old, settled: true, roundXID: round,
			want: domain.Settlement{Handle: 3}},
		{name: "a gap above a settled horizon needs a horizon of its own",
			after: 4, seqs: []int64{6, 8, 10}, stored: old, settled: true, roundXID: round,
			want: domain.Settlement{Handle: 2, Held: true, Horizon: domain.Horizon{XID: round, Through: 10}}},
		{name: "an unsettled horizon whose gaps were filled is dropped",
			after: 4, seqs: []int64{5, 6, 7, 8}, stored: old, roundXID: round,
			want: domain.Settlement{Handle: 4}},
		{name: "an unsettled horizon is kept while the round has not reached it",
			after: 4, seqs: []int64{5, 6}, stored: old, roundXID: round,
			want: domain.Settlement{Handle: 2, Horizon: old}},
		{name: "settled means nothing without a horizon",
			after: 4, seqs: []int64{6}, settled: true, roundXID: round,
			want: domain.Settlement{Held: true, Horizon: domain.Horizon{XID: round, Through: 6}}},
		{name: "a horizon below the round's start settles nothing new",
			after: 9, seqs: []int64{11}, stored: old, settled: true, roundXID: round,
			want: domain.Settlement{Held: true, Horizon: domain.Horizon{XID: round, Through: 11}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, domain.Settle(tc.after, tc.seqs, tc.stored, tc.settled, tc.roundXID))
		})
	}
}
