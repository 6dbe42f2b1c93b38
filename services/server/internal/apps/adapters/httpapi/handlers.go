// Package httpapi serves the app operations of the HTTP contract
// (api/openapi.yaml, tag Apps) as methods of the generated strict server
// interface (services/server/api): listApps, createApp, getApp, installApp,
// uninstallApp, suspendApp, resumeApp, setAppScopes, listAppGrants,
// createAppGrant and deleteAppGrant (Handlers); and the webhook operations
// (tag Webhooks): listWebhookSubscriptions, createWebhookSubscription,
// updateWebhookSubscription, deleteWebhookSubscription,
// listWebhookDeliveries and redeliverWebhook (WebhookHandlers).
//
// A handler translates the request object into a use-case call of
// internal/apps/app and the result into the response object. It decides no
// rights and maps no errors: the use case authorizes, and an error returned
// here reaches the strict server's ResponseErrorHandlerFunc (the problem
// writer of platform/httpserver), which maps the *errs.Error code to the
// status in its one table. Arrays are always non-nil slices, because a nil
// slice encodes as JSON null, which the contract forbids (ADR 0053).
package httpapi

import (
	"bothy/server/api"
	"bothy/server/internal/apps"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/apps/domain"
)

// Handlers implements the app operations of api.StrictServerInterface. The
// role assembly embeds it, with the handler sets of the other modules, in
// the one strict server of internal/wire.
type Handlers struct {
	svc app.Platform
}

// NewHandlers returns the handlers over the use cases svc (app.Service in
// the role assembly). It panics on a nil svc (a wiring bug).
func NewHandlers(svc app.Platform) *Handlers {
	if svc == nil {
		panic("apps: NewHandlers needs the use cases")
	}
	return &Handlers{svc: svc}
}

// toApp renders a registered app.
func toApp(a domain.App) api.App {
	return api.App{
		Id:        a.ID,
		Name:      a.Name,
		Manifest:  toManifest(a.Manifest),
		CreatedAt: a.CreatedAt,
		UpdatedAt: a.UpdatedAt,
	}
}

// toManifest renders a manifest in the contract's form: scopes and events
// always as arrays, description and delivery only when present (mode none
// is an absent delivery).
func toManifest(m domain.Manifest) api.AppManifest {
	out := api.AppManifest{
		Name:   m.Name,
		Scopes: toScopes(m.Scopes),
	}
	events := toEventTypes(m.Events)
	out.Events = &events
	if m.Description != "" {
		d := m.Description
		out.Description = &d
	}
	if m.Delivery.Mode == domain.DeliveryWebhook {
		out.Delivery = &api.AppDelivery{Mode: api.AppDeliveryMode(m.Delivery.Mode), EventsUrl: m.Delivery.EventsURL}
	}
	return out
}

// fromManifest reads a manifest of a request: an absent delivery is mode
// none, absent events none.
func fromManifest(m api.AppManifest) domain.Manifest {
	out := domain.Manifest{
		Name:     m.Name,
		Scopes:   fromScopes(m.Scopes),
		Events:   []string{},
		Delivery: domain.Delivery{Mode: domain.DeliveryNone},
	}
	if m.Description != nil {
		out.Description = *m.Description
	}
	if m.Events != nil {
		out.Events = fromEventTypes(*m.Events)
	}
	if m.Delivery != nil {
		out.Delivery = domain.Delivery{Mode: domain.DeliveryMode(m.Delivery.Mode), EventsURL: m.Delivery.EventsUrl}
	}
	return out
}

// toInstallation renders an installation.
func toInstallation(i apps.Installation) api.AppInstallation {
	return api.AppInstallation{
		Id:                 i.ID,
		AppId:              i.AppID,
		PrincipalId:        i.PrincipalID,
		State:              api.AppInstallationState(i.State),
		GrantedScopes:      toScopes(i.GrantedScopes),
		EventSubscriptions: toEventTypes(i.EventSubscriptions),
		CreatedAt:          i.InstalledAt,
		UpdatedAt:          i.UpdatedAt,
	}
}

func toScopes(s []string) []api.AppScope {
	out := make([]api.AppScope, 0, len(s))
	for _, v := range s {
		out = append(out, api.AppScope(v))
	}
	return out
}

// fromScopes keeps nil apart from empty: the use cases read nil as "not
// given". The contract requires scopes wherever it takes them, so a
// decoded body gives a non-nil slice.
func fromScopes(s []api.AppScope) []string {
	if s == nil {
		return nil
	}
	out := make([]string, 0, len(s))
	for _, v := range s {
		out = append(out, string(v))
	}
	return out
}

func toEventTypes(s []string) []api.EventType {
	out := make([]api.EventType, 0, len(s))
	for _, v := range s {
		out = append(out, api.EventType(v))
	}
	return out
}

func fromEventTypes(s []api.EventType) []string {
	out := make([]string, 0, len(s))
	for _, v := range s {
		out = append(out, string(v))
	}
	return out
}
