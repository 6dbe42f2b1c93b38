package auditing_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/auditing"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

var (
	robin = actor.Principal{ID: ids.MustParse("0193b7a2-6f1e-7c3d-9a4b-2c1d0e9f8a01"), Kind: actor.KindPerson, Role: actor.RoleOwner}
	appID = ids.MustParse("0193b7a2-6f1e-7c3d-9a4b-2c1d0e9f8a02")
	subID = ids.MustParse("0193b7a2-6f1e-7c3d-9a4b-2c1d0e9f8a03")
)

func valid() auditing.Entry {
	return auditing.Entry{
		Action:       "webhook_out.manage",
		Actor:        robin,
		ResourceKind: "app",
		ResourceID:   appID,
		Outcome:      auditing.Allow,
		Details: []auditing.Detail{
			auditing.ID("subscription_id", subID),
			auditing.Code("change", "created"),
			auditing.Code("host", "hooks.example.com:8443"),
			auditing.List("event_types", "message.created", "channel.created"),
			auditing.Bool("hmac_enabled", true),
			auditing.Int("hmac_generation", 0),
		},
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(e *auditing.Entry)
		ok     bool
	}{
		{"a well-formed allow passes", func(*auditing.Entry) {}, true},
		{"a deny with a reason passes", func(e *auditing.Entry) { e.Outcome, e.Reason = auditing.Deny, "no_grant" }, true},
		{"the system actor passes", func(e *auditing.Entry) { e.Actor = actor.System }, true},
		{"the anonymous actor passes", func(e *auditing.Entry) { e.Actor = actor.Principal{} }, true},
		{"a collection without resource ID passes", func(e *auditing.Entry) { e.ResourceID = ids.Zero }, true},
		{"no details pass", func(e *auditing.Entry) { e.Details = nil }, true},
		{"an empty list passes", func(e *auditing.Entry) { e.Details = []auditing.Detail{auditing.List("event_types")} }, true},
		{"an action without a dot fails", func(e *auditing.Entry) { e.Action = "manage" }, false},
		{"an action with upper case fails", func(e *auditing.Entry) { e.Action = "Webhook_out.manage" }, false},
		{"an empty resource kind fails", func(e *auditing.Entry) { e.ResourceKind = "" }, false},
		{"a resource kind with a space fails", func(e *auditing.Entry) { e.ResourceKind = "web hook" }, false},
		{"an unknown outcome fails", func(e *auditing.Entry) { e.Outcome = "maybe" }, false},
		{"an allow with a reason fails", func(e *auditing.Entry) { e.Reason = "no_grant" }, false},
		{"a deny without a reason fails", func(e *auditing.Entry) { e.Outcome = auditing.Deny }, false},
		{"a deny with a free-text reason fails", func(e *auditing.Entry) { e.Outcome, e.Reason = auditing.Deny, "Robin may not" }, false},
		{"a person without an ID fails", func(e *auditing.Entry) { e.Actor = actor.Principal{Kind: actor.KindPerson} }, false},
		{"an ID without a kind fails", func(e *auditing.Entry) { e.Actor = actor.Principal{ID: appID} }, false},
		{"an unknown actor kind fails", func(e *auditing.Entry) { e.Actor = actor.Principal{ID: appID, Kind: "robot"} }, false},
		{"a code with a space fails", func(e *auditing.Entry) { e.Details = append(e.Details, auditing.Code("note", "hello world")) }, false},
		{"a code with a slash fails", func(e *auditing.Entry) {
			e.Details = append(e.Details, auditing.Code("host", "hooks.example.com/path"))
		}, false},
		{"a URL as code fails", func(e *auditing.Entry) {
			e.Details = append(e.Details, auditing.Code("url", "https://hooks.example.com/x?token=1"))
		}, false},
		{"a code in upper case fails", func(e *auditing.Entry) { e.Details = append(e.Details, auditing.Code("state", "Paused")) }, false},
		{"an empty code fails", func(e *auditing.Entry) { e.Details = append(e.Details, auditing.Code("state", "")) }, false},
		{"a code of 65 characters fails", func(e *auditing.Entry) {
			e.Details = append(e.Details, auditing.Code("state", "a123456789a123456789a123456789a123456789a123456789a123456789abcde"))
		}, false},
		{"a list with one free-text element fails", func(e *auditing.Entry) {
			e.Details = append(e.Details, auditing.List("types", "message.created", "Alex said hi"))
		}, false},
		{"a zero ID fails", func(e *auditing.Entry) { e.Details = append(e.Details, auditing.ID("delivery_id", ids.Zero)) }, false},
		{"a key with upper case fails", func(e *auditing.Entry) { e.Details = append(e.Details, auditing.Int("Seq", 1)) }, false},
		{"a key with a space fails", func(e *auditing.Entry) { e.Details = append(e.Details, auditing.Bool("is on", true)) }, false},
		{"a repeated key fails", func(e *auditing.Entry) { e.Details = append(e.Details, auditing.Code("change", "deleted")) }, false},
		{"a zero Detail fails", func(e *auditing.Entry) { e.Details = append(e.Details, auditing.Detail{}) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := valid()
			tc.change(&e)
			err := e.Validate()
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, auditing.ErrInvalid)
			require.Equal(t, errs.CodeInternal, errs.CodeOf(err))
		})
	}
}

func TestErrorsNameThePartNeverTheValue(t *testing.T) {
	t.Parallel()
	e := valid()
	e.Details = append(e.Details, auditing.Code("note", "whsec_c2VjcmV0 hooks.example.com/p"))
	err := e.Validate()
	require.Error(t, err)
	require.NotContains(t, err.Error(), "whsec_")
	require.NotContains(t, err.Error(), "hooks.example.com")
	require.Contains(t, err.Error(), "detail 6")
}

func TestDetailsMap(t *testing.T) {
	t.Parallel()
	require.Equal(t, map[string]any{
		"subscription_id": subID.String(),
		"change":          "created",
		"host":            "hooks.example.com:8443",
		"event_types":     []string{"message.created", "channel.created"},
		"hmac_enabled":    true,
		"hmac_generation": int64(0),
	}, valid().DetailsMap())
}

func TestActorColumns(t *testing.T) {
	t.Parallel()
	a, err := auditing.ActorColumns(robin)
	require.NoError(t, err)
	require.Equal(t, auditing.Actor{ID: robin.ID, Kind: "person"}, a)
	a, err = auditing.ActorColumns(actor.System)
	require.NoError(t, err)
	require.Equal(t, auditing.Actor{Kind: "system"}, a)
	a, err = auditing.ActorColumns(actor.Principal{})
	require.NoError(t, err)
	require.Equal(t, auditing.Actor{Kind: auditing.ActorAnonymous}, a)
}
