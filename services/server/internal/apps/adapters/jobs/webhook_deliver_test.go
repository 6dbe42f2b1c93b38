package jobs_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	appsjobs "bothy/server/internal/apps/adapters/jobs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/jobs"
)

func TestWebhookDeliverArgsAreValid(t *testing.T) {
	t.Parallel()
	require.NoError(t, jobs.ValidateArgsType(appsjobs.WebhookDeliver{SubscriptionID: ids.New()}))
	require.Equal(t, "apps.webhook_deliver", appsjobs.WebhookDeliver{}.Kind())
}
