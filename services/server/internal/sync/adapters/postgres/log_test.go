package postgres_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/eventlog"
)

func TestEventTypesBySeq(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	deleted := messageEvent("Sam removed this")
	deleted.Type = eventlog.MessageDeleted
	var seqs []int64
	require.NoError(t, b.uow.Do(ctx, func(ctx context.Context) error {
		for _, ev := range []eventlog.Event{messageEvent("hello Sam"), deleted, messageEvent("hello Robin")} {
			got, err := b.appender.Append(ctx, ev)
			if err != nil {
				return err
			}
			seqs = append(seqs, got.Seq)
		}
		return nil
	}))

	const neverAppended = 1 << 40
	types, err := b.log.EventTypesBySeq(ctx, []int64{seqs[2], seqs[1], neverAppended, seqs[1]})
	require.NoError(t, err)
	require.Equal(t, map[int64]eventlog.Type{seqs[1]: eventlog.MessageDeleted, seqs[2]: eventlog.MessageCreated}, types,
		"retained events only, each once, whatever the order of the request")

	types, err = b.log.EventTypesBySeq(ctx, nil)
	require.NoError(t, err)
	require.Empty(t, types)
}
