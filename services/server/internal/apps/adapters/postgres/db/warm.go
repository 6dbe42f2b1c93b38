// Package db is the apps module's statements as sqlc generates them from
// ../queries and the migrations (*.gen.go, never edited), and the list of
// those a server process's new connection plans first (HotStatements).
package db

// HotStatements are the statements of this module on the path of a
// delivery (the round's routing and rows, the claim, the record) and of
// every request of an app (its installation's facts), which a
// server process's new connection plans before its first use (pg.Warm,
// ADR 0096).
var HotStatements = []string{
	webhookSubscriptionDeliveryCandidates,
	webhookSubscriptionDeliveryCandidatesOf,
	appInstallationFactsByPrincipal,
	webhookDeliveryInsertForRound,
	webhookSubscriptionLockDeliveryTargets,
	webhookSubscriptionLockForRecord,
	webhookDeliveryClaimHeads,
	webhookDeliveryClaimHeadsMany,
	webhookSubscriptionRecordAttempt,
	webhookSubscriptionRecordAttemptsMany,
}
