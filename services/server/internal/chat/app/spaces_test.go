package app_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/chat/app"
	"bothy/server/internal/chat/domain"
	"bothy/server/internal/kernel/auditing/audittest"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/kernel/ids"
)

func TestCreateSpace(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sp, err := b.chat.CreateSpace(as(b.world.Robin), app.CreateSpace{Name: "Vertrieb"})
	require.NoError(t, err)
	require.Equal(t, "Vertrieb", sp.Name)
	require.Equal(t, b.world.Robin.ID, sp.CreatedBy)
	require.Equal(t, start, sp.CreatedAt)

	rows := audittest.List(t, b.db.App, audittest.Filter{Action: "space.manage", Outcome: "allow"})
	require.Len(t, rows, 1)
	require.Equal(t, sp.ID, rows[0].ResourceID)
	require.Equal(t, map[string]any{"change": "created"}, rows[0].Details)

	_, err = b.chat.CreateSpace(as(b.world.Alex), app.CreateSpace{Name: "Geheim"})
	require.Equal(t, errs.NotFound(), err, "owner-only: a member gets not_found")
	require.Len(t, b.denials(t, "space.manage"), 1)

	for _, name := range []string{"", "  ", strings.Repeat("x", 21), "Sup\nport"} {
		_, err = b.chat.CreateSpace(as(b.world.Robin), app.CreateSpace{Name: name})
		requireProblem(t, err, errs.CodeValidationFailed, "", "/name")
	}
	require.Equal(t, 3, b.count(t, "spaces"), "bad input changes nothing")
}

func TestAddSpaceMember(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.world
	m, err := b.chat.AddSpaceMember(as(w.Robin), app.AddSpaceMember{SpaceID: w.Marketing, PersonID: w.Sam.ID, Level: domain.LevelRead})
	require.NoError(t, err)
	require.Equal(t, domain.Member{SpaceID: w.Marketing, PersonID: w.Sam.ID, Level: domain.LevelRead, CreatedAt: start}, m)
	rows := audittest.List(t, b.db.App, audittest.Filter{Action: "space.manage", Outcome: "allow", ResourceID: w.Marketing})
	require.Len(t, rows, 1)
	require.Equal(t, map[string]any{"change": "member_added", "person_id": w.Sam.ID.String(), "level": "read"}, rows[0].Details)

	spaces, err := b.chat.ListSpaces(as(w.Sam))
	require.NoError(t, err)
	require.Equal(t, []string{"Marketing", "Support"}, names(spaces))

	for _, tc := range []struct {
		name     string
		cmd      app.AddSpaceMember
		code     errs.Code
		reason   string
		pointers []string
	}{
		{"a second membership", app.AddSpaceMember{SpaceID: w.Marketing, PersonID: w.Sam.ID, Level: domain.LevelWrite}, errs.CodeConflict, "already_member", nil},
		{"an unknown level", app.AddSpaceMember{SpaceID: w.Marketing, PersonID: w.Alex.ID, Level: "owner"}, errs.CodeValidationFailed, "", []string{"/level"}},
		{"an unknown person", app.AddSpaceMember{SpaceID: w.Marketing, PersonID: ids.New(), Level: domain.LevelRead}, errs.CodeValidationFailed, "", []string{"/person_id"}},
		{"an app is no person", app.AddSpaceMember{SpaceID: w.Marketing, PersonID: w.Tracker.ID, Level: domain.LevelRead}, errs.CodeValidationFailed, "", []string{"/person_id"}},
		{"an unknown space", app.AddSpaceMember{SpaceID: ids.New(), PersonID: w.Alex.ID, Level: domain.LevelRead}, errs.CodeNotFound, "", nil},
	} {
		_, err := b.chat.AddSpaceMember(as(w.Robin), tc.cmd)
		requireProblem(t, err, tc.code, tc.reason, tc.pointers...)
	}
	_, err = b.chat.AddSpaceMember(as(w.Alex), app.AddSpaceMember{SpaceID: w.Support, PersonID: w.Sam.ID, Level: domain.LevelAdmin})
	require.Equal(t, errs.NotFound(), err)
	require.Equal(t, 3, b.count(t, "space_members"), "only the world's two and Sam in Marketing")
}

func TestCreateChannelAppendsChannelCreated(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.world
	c, err := b.chat.CreateChannel(as(w.Robin), app.CreateChannel{SpaceID: w.Marketing, Name: "Kampagnen"})
	require.NoError(t, err)
	require.Equal(t, w.Marketing, c.SpaceID)

	evs := b.events(t)
	require.Len(t, evs, 1)
	ev := evs[0]
	require.Equal(t, eventlog.ChannelCreated, ev.Type)
	require.Equal(t, c.ID, ev.ResourceID)
	require.Equal(t, w.Marketing, ev.SpaceID)
	require.Equal(t, c.ID, ev.ChannelID)
	require.Equal(t, w.Robin.ID, ev.ActorID)
	require.Equal(t, map[string]any{"channel": map[string]any{"id": c.ID.String(), "space_id": w.Marketing.String(),
		"name": "Kampagnen", "created_at": "2026-11-30T09:00:00.000000Z"}}, payload(t, ev))
	require.Len(t, audittest.List(t, b.db.App, audittest.Filter{Action: "channel.manage", Outcome: "allow"}), 1)

	_, err = b.chat.CreateChannel(as(w.Robin), app.CreateChannel{SpaceID: w.Marketing, Name: "Kampagnen"})
	requireProblem(t, err, errs.CodeConflict, "name_taken")
	_, err = b.chat.CreateChannel(as(w.Robin), app.CreateChannel{SpaceID: w.Marketing, Name: ""})
	requireProblem(t, err, errs.CodeValidationFailed, "", "/name")
	_, err = b.chat.CreateChannel(as(w.Alex), app.CreateChannel{SpaceID: w.Support, Name: "Intern"})
	require.Equal(t, errs.NotFound(), err)
	_, err = b.chat.CreateChannel(as(w.Robin), app.CreateChannel{SpaceID: ids.New(), Name: "Intern"})
	require.Equal(t, errs.NotFound(), err)
	require.Len(t, b.events(t), 1, "failed creations append nothing")
	require.Equal(t, 3, b.count(t, "channels"))
}

func names[T domain.Space | domain.Channel](items []T) []string {
	out := []string{}
	for _, it := range items {
		switch v := any(it).(type) {
		case domain.Space:
			out = append(out, v.Name)
		case domain.Channel:
			out = append(out, v.Name)
		}
	}
	return out
}

func TestListSpacesAndChannelsByVisibility(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.world
	for _, tc := range []struct {
		who  string
		ctx  func() []string
		want []string
	}{
		{"Robin sees every space", func() []string { s, err := b.chat.ListSpaces(as(w.Robin)); require.NoError(t, err); return names(s) }, []string{"Marketing", "Support"}},
		{"Alex sees Support only", func() []string { s, err := b.chat.ListSpaces(as(w.Alex)); require.NoError(t, err); return names(s) }, []string{"Support"}},
		{"Tracker sees the space of its grant", func() []string { s, err := b.chat.ListSpaces(as(w.Tracker)); require.NoError(t, err); return names(s) }, []string{"Support"}},
		{"Alex sees every channel of Support", func() []string {
			c, err := b.chat.ListChannels(as(w.Alex), w.Support)
			require.NoError(t, err)
			return names(c)
		}, []string{"Allgemein", "Eskalation"}},
	} {
		require.Equal(t, tc.want, tc.ctx(), tc.who)
	}
	require.Empty(t, audittest.List(t, b.db.App, audittest.Filter{Outcome: "deny"}), "filtered rows write no denial")

	_, err := b.chat.ListChannels(as(w.Tracker), w.Support)
	requireProblem(t, err, errs.CodeForbidden, "scope_missing")

	reader := w.Tracker
	reader.GrantedScopes = append(reader.GrantedScopes, "channels:read")
	channels, err := b.chat.ListChannels(as(reader), w.Support)
	require.NoError(t, err)
	require.Equal(t, []string{"Eskalation"}, names(channels), "an app lists only the channels its grants cover")

	_, err = b.chat.ListChannels(as(w.Alex), w.Marketing)
	require.Equal(t, errs.NotFound(), err, "Alex cannot see Marketing")
	_, err = b.chat.ListChannels(as(w.Alex), ids.New())
	require.Equal(t, errs.NotFound(), err)

	agent := w.Tracker
	agent.Kind = "agent"
	_, err = b.chat.ListSpaces(as(agent))
	requireProblem(t, err, errs.CodeForbidden, "subject_kind_not_allowed")
}
