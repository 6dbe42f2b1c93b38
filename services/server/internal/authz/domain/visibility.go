package domain

import (
	"bothy/server/internal/authz"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

// GrantFact is one grant of the deciding principal, as Facts carry it.
type GrantFact struct {
	// SpaceID is the space of the grant.
	SpaceID ids.ID
	// ChannelID is the channel, Zero for the whole space.
	ChannelID ids.ID
	// Level is what the grant gives.
	Level authz.Level
}

// Standing is what a principal has on one resource: whether it sees it and
// the level it holds there (empty for none).
type Standing struct {
	// Visible reports whether the resource exists for the principal. An
	// invisible resource answers not_found, exactly like an unknown one.
	Visible bool
	// Level is the highest level the principal holds on the resource.
	Level authz.Level
}

// Errors of resource descriptions that do not place the resource: the
// caller must fill SpaceID (and ChannelID below a channel). They are
// internal: a use case builds the Resource from its rows.
var (
	// ErrUnplaced: a channel, thread or message without its space, or a
	// thread or message without its channel.
	ErrUnplaced = errs.New(errs.CodeInternal, "authz: resource lacks its space or channel")
)

// StandingOn returns the standing of p on r (docs/spec/07-permissions.md
// 4.3), from the facts of p:
//
//   - instance: visible to every authenticated principal; owners admin,
//     everyone else read.
//   - space: a person sees it as owner, as member or with a grant in it
//     (on the space or on one of its channels); an app sees it with a grant
//     in it. The level is the owner's admin, else the higher of the
//     membership and the space-wide grant, else read for a principal that
//     sees the space only through a channel grant (it may read the space's
//     name). Without an ID (the collection of spaces) every principal
//     sees it with read, owners with admin.
//   - channel (and the threads and messages in it): a person sees it when
//     it sees its space; an app when it holds a grant on the channel or on
//     the space. The level is the higher of membership, space-wide grant
//     and channel grant (admin for owners); it may be empty for a person
//     who sees the space only through a grant on another channel. Without
//     an ID (the collection of a space's channels) the standing is that of
//     the space.
//   - app, app installation, webhook subscription and delivery, agent,
//     person, personal token, session: visible to owners only (AZ-P4),
//     with admin.
//
// Errors: ErrUnplaced when r lacks its space or channel.
func StandingOn(p actor.Principal, r authorize.Resource, f Facts) (Standing, error) {
	owner := p.IsOwner()
	switch r.Kind {
	case authorize.KindInstance:
		if owner {
			return Standing{Visible: true, Level: authz.LevelAdmin}, nil
		}
		return Standing{Visible: true, Level: authz.LevelRead}, nil
	case authorize.KindSpace:
		space := spaceOf(r)
		if space.IsZero() {
			if owner {
				return Standing{Visible: true, Level: authz.LevelAdmin}, nil
			}
			return Standing{Visible: true, Level: authz.LevelRead}, nil
		}
		return spaceStanding(p, space, f), nil
	case authorize.KindChannel:
		channel := channelOf(r)
		if r.SpaceID.IsZero() {
			return Standing{}, ErrUnplaced
		}
		if channel.IsZero() {
			return spaceStanding(p, r.SpaceID, f), nil
		}
		return channelStanding(p, r.SpaceID, channel, f), nil
	case authorize.KindThread, authorize.KindMessage:
		if r.SpaceID.IsZero() || r.ChannelID.IsZero() {
			return Standing{}, ErrUnplaced
		}
		return channelStanding(p, r.SpaceID, r.ChannelID, f), nil
	default:
		if owner {
			return Standing{Visible: true, Level: authz.LevelAdmin}, nil
		}
		return Standing{}, nil
	}
}

// spaceOf is the space a space resource names: its ID, else SpaceID.
func spaceOf(r authorize.Resource) ids.ID {
	if !r.ID.IsZero() {
		return r.ID
	}
	return r.SpaceID
}

// channelOf is the channel a channel resource names: its ID, else
// ChannelID.
func channelOf(r authorize.Resource) ids.ID {
	if !r.ID.IsZero() {
		return r.ID
	}
	return r.ChannelID
}

// Place is where a resource sits as far as the grants of apps go.
type Place struct {
	// Space and Channel (Zero for a space-wide place).
	Space, Channel ids.ID
}

// PlaceOf returns the place whose grants decide, under the rules of
// StandingOn, whether an app sees r: the channel of a channel, thread or
// message, with its space; the space of a space. It returns false for
// everything else (the instance, collections, the kinds only owners see),
// where grants do not narrow who sees r. The delivery router
// (authz.DeliveryRouter.Reach) finds the holders of grants there.
func PlaceOf(r authorize.Resource) (Place, bool) {
	var at Place
	switch r.Kind {
	case authorize.KindChannel:
		at = Place{Space: r.SpaceID, Channel: channelOf(r)}
	case authorize.KindThread, authorize.KindMessage:
		at = Place{Space: r.SpaceID, Channel: r.ChannelID}
	case authorize.KindSpace:
		at = Place{Space: spaceOf(r)}
	}
	return at, !at.Space.IsZero()
}

// spaceStanding is the standing on a space with an ID.
func spaceStanding(p actor.Principal, space ids.ID, f Facts) Standing {
	if p.IsOwner() {
		return Standing{Visible: true, Level: authz.LevelAdmin}
	}
	var level authz.Level
	if p.Kind == actor.KindPerson {
		level = f.Memberships[space]
	}
	visible := level.Valid()
	for _, g := range f.Grants {
		if g.SpaceID != space {
			continue
		}
		visible = true
		if g.ChannelID.IsZero() {
			level = authz.Max(level, g.Level)
		}
	}
	if visible && !level.Valid() {
		level = authz.LevelRead
	}
	return Standing{Visible: visible, Level: level}
}

// channelStanding is the standing on a channel with an ID, and on the
// threads and messages in it.
func channelStanding(p actor.Principal, space, channel ids.ID, f Facts) Standing {
	if p.IsOwner() {
		return Standing{Visible: true, Level: authz.LevelAdmin}
	}
	var level authz.Level
	visible := false
	if p.Kind == actor.KindPerson {
		level = f.Memberships[space]
		visible = level.Valid()
	}
	for _, g := range f.Grants {
		if g.SpaceID != space {
			continue
		}
		switch {
		case g.ChannelID.IsZero() || g.ChannelID == channel:
			visible = true
			level = authz.Max(level, g.Level)
		case p.Kind == actor.KindPerson:
			// A person sees every channel of a space it sees.
			visible = true
		}
	}
	return Standing{Visible: visible, Level: level}
}
