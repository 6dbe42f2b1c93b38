package domain

// Scope is an app scope (docs/spec/05-actions.md 2.6): what an installed app
// may do at most, whatever its grants. The owner grants scopes at install
// time and with setAppScopes; an app principal carries them as
// actor.Principal.GrantedScopes.
type Scope string

// The app scopes.
const (
	// ScopeNone marks an action that needs no app scope: the scope-free
	// metadata actions (instance.read) and the actions apps never reach
	// (owner-only, self, system).
	ScopeNone Scope = "none"
	// ScopeEventsSubscribe lets an app receive durable events by webhook
	// (webhook_out.deliver); each event also needs the scope of its receive
	// action.
	ScopeEventsSubscribe Scope = "events:subscribe"
	// ScopeMessagesRead lets an app read messages (message.read).
	ScopeMessagesRead Scope = "messages:read"
	// ScopeMessagesWrite lets an app post, edit and delete messages
	// (message.post, message.update, message.delete).
	ScopeMessagesWrite Scope = "messages:write"
	// ScopeChannelsRead lets an app read channels (channel.read).
	ScopeChannelsRead Scope = "channels:read"
)

// scopeDocs describes each grantable scope, in the order of the catalogue.
var scopeDocs = []struct {
	scope Scope
	doc   string
}{
	{ScopeEventsSubscribe, "receive durable events by webhook; each event also needs the scope of its receive action"},
	{ScopeMessagesRead, "read messages (message.read)"},
	{ScopeMessagesWrite, "post, edit and delete messages (message.post, message.update, message.delete)"},
	{ScopeChannelsRead, "read channels (channel.read)"},
}

// Scopes returns the grantable app scopes in catalogue order (ScopeNone is
// not one of them).
func Scopes() []Scope {
	out := make([]Scope, 0, len(scopeDocs))
	for _, s := range scopeDocs {
		out = append(out, s.scope)
	}
	return out
}

// ScopeDoc returns what the grantable scope s allows, in a few words (the
// "allows" column of docs/spec/05-actions.md 2.6); "" for ScopeNone and any
// other string.
func ScopeDoc(s Scope) string {
	for _, d := range scopeDocs {
		if d.scope == s {
			return d.doc
		}
	}
	return ""
}
