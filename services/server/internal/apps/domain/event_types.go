package domain

import (
	"slices"
	"strconv"

	"bothy/server/internal/kernel/errs"
)

// subscribable is the set of D-M2-26-9: every durable event
// type an app may receive, that is the webhooks of the HTTP contract minus
// the types whose only receiver is an agent (agent.invocation.requested).
// Sorted; the contract test compares it with api/openapi.yaml and
// docs/spec/actions.yaml.
var subscribable = []string{
	"app.installation.updated",
	"channel.created",
	"channel.updated",
	"instance.updated",
	"message.created",
	"message.deleted",
	"message.updated",
	"thread.created",
}

// AppSubscribable reports whether an app subscription may name eventType
// (D-M2-26-9). The comparison is exact: event types have one spelling.
func AppSubscribable(eventType string) bool {
	_, ok := slices.BinarySearch(subscribable, eventType)
	return ok
}

// ValidateEventTypes checks the event_types of a subscription against the
// installation's event_subscriptions (granted): the list is not empty, has
// no duplicates, and every entry is AppSubscribable and in granted.
//
// The error is a *errs.Error validation_failed listing every defect:
// pointer /event_types with item code required for an empty list, otherwise
// pointer /event_types/<index> with item code duplicate (a repeat of an
// earlier entry), not_subscribable or not_granted, one field per defective
// entry in index order.
func ValidateEventTypes(types, granted []string) error {
	if len(types) == 0 {
		return errs.Validation(errs.Field(pointerEventTypes, itemRequired))
	}
	var fields []errs.FieldError
	seen := make(map[string]bool, len(types))
	for i, typ := range types {
		item := ""
		switch {
		case seen[typ]:
			item = itemDuplicate
		case !AppSubscribable(typ):
			item = itemNotSubscribable
		case !slices.Contains(granted, typ):
			item = itemNotGranted
		}
		seen[typ] = true
		if item != "" {
			fields = append(fields, errs.Field(pointerEventTypes+"/"+strconv.Itoa(i), item))
		}
	}
	if len(fields) > 0 {
		return errs.Validation(fields...)
	}
	return nil
}
