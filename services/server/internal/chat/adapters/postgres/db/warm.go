// Package db is the chat module's statements as sqlc generates them from
// ../queries and the migrations (*.gen.go, never edited), and the list of
// those a server process's new connection plans first (HotStatements).
package db

// HotStatements are the statements of this module on the path of a post
// and of a read of a channel, which a server process's new connection
// plans before its first use (pg.Warm, ADR 0096).
var HotStatements = []string{
	channelListByIDs,
	spaceMemberListByPrincipals,
	messageInsert,
	messagePageLatest,
	messagePageBefore,
}
