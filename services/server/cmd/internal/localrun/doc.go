// Package localrun holds what the programs that drive a bothy on this
// machine share: `make demo` (cmd/bothy-demo) and `make bench-e2e`
// (cmd/bothy-bench). It calls the public REST API like any client
// (Client), creates the first owner with the identity bootstrap
// (CreateOwner) and finds free loopback ports for the listeners
// (FreeLoopbackAddresses). Nothing here is meant for a server that others
// reach.
package localrun
