// Package db is the authz module's statements as sqlc generates them from
// ../queries and the migrations (*.gen.go, never edited), and the list of
// those a server process's new connection plans first (HotStatements).
package db

// HotStatements are the statements of this module on the path of a post
// (the posters' grants) and of its delivery (the grants of a consumer
// round), which a server process's new connection plans before its first
// use (pg.Warm, ADR 0096).
var HotStatements = []string{
	grantFactsBySubjects,
	grantHoldersByPlaces,
}
