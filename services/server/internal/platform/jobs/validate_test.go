package jobs_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/jobs"
)

// webhookDeliverArgs has the shape of apps.webhook_deliver.
type webhookDeliverArgs struct {
	SubscriptionID ids.ID `json:"subscription_id"`
}

func (webhookDeliverArgs) Kind() string { return "apps.webhook_deliver" }

type nestedArgs struct {
	Window struct {
		From time.Time `json:"from"`
		To   time.Time `json:"to"`
	} `json:"window"`
	Tables []string            `json:"tables"`
	Limits map[string]int      `json:"limits"`
	Owner  *webhookDeliverArgs `json:"owner,omitempty"`
}

func (nestedArgs) Kind() string { return "sync.partition_maintain" }

type noKindArgs struct{}

func (noKindArgs) Kind() string { return "" }

type upperKindArgs struct{}

func (upperKindArgs) Kind() string { return "Apps.Deliver" }

type spaceKindArgs struct{}

func (spaceKindArgs) Kind() string { return "apps.webhook deliver" }

type skippedFieldArgs struct {
	ID    ids.ID `json:"id"`
	Token string `json:"-"`
}

func (skippedFieldArgs) Kind() string { return "test.skipped" }

type nestedHiddenArgs struct {
	Inner struct {
		Visible int `json:"visible"`
		hidden  int
	} `json:"inner"`
}

func (nestedHiddenArgs) Kind() string { return "test.nested_hidden" }

type interfaceArgs struct {
	Payload any `json:"payload"`
}

func (interfaceArgs) Kind() string { return "test.interface" }

type funcArgs struct {
	Callback func() `json:"callback"`
}

func (funcArgs) Kind() string { return "test.func" }

type variableKindArgs struct {
	Name string `json:"name"`
}

func (a variableKindArgs) Kind() string { return "test." + a.Name }

// lossy marshals to a constant: the value does not survive the round trip.
type lossy struct{ n int }

func (lossy) MarshalJSON() ([]byte, error)  { return []byte(`0`), nil }
func (*lossy) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, new(int)) }

type lossyArgs struct {
	Value lossy `json:"value"`
}

func (lossyArgs) Kind() string { return "test.lossy" }

type pointerArgs struct {
	N int `json:"n"`
}

func (*pointerArgs) Kind() string { return "test.pointer" }

func TestValidateArgsType(t *testing.T) {
	t.Parallel()
	now := time.Now()
	good := nestedArgs{Tables: []string{"event_log"}, Limits: map[string]int{"ahead": 3}, Owner: &webhookDeliverArgs{SubscriptionID: ids.New()}}
	good.Window.From = now
	good.Window.To = now.Add(time.Hour)

	tests := []struct {
		name    string
		sample  jobs.Args
		problem string // "" when the type is accepted
	}{
		{"the webhook delivery args are accepted", webhookDeliverArgs{SubscriptionID: ids.New()}, ""},
		{"nested structs, times, slices, maps and pointers are accepted", good, ""},
		{"zero values are accepted", nestedArgs{}, ""},
		{"an empty kind is refused", noKindArgs{}, "kind"},
		{"a kind in upper case is refused", upperKindArgs{}, "kind"},
		{"a kind with a space is refused", spaceKindArgs{}, "kind"},
		{"a kind without a module prefix is refused", badKindArgs{}, "kind"},
		{"a kind that depends on a field is refused", variableKindArgs{Name: "x"}, "constant"},
		{"an unexported field is refused", hiddenFieldArgs{ID: ids.New(), secret: "s"}, "secret"},
		{"an unexported field of a nested struct is refused", nestedHiddenArgs{}, "hidden"},
		{"a field skipped by its json tag is refused", skippedFieldArgs{}, "Token"},
		{"an interface field is refused", interfaceArgs{Payload: 1}, "Payload"},
		{"a func field is refused", funcArgs{}, "Callback"},
		{"a value that does not survive JSON is refused", lossyArgs{Value: lossy{n: 3}}, "round trip"},
		{"a pointer args type is refused", &pointerArgs{N: 1}, "struct"},
		{"nil is refused", nil, "nil"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := jobs.ValidateArgsType(tc.sample)
			if tc.problem == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.problem)
		})
	}
}
