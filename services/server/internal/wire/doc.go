// Package wire assembles the roles of the bothy binary (api, worker, all)
// from the modules (NewProcess, BuildModules), and owns the configuration:
// the key registry, the cross checks and the typed Config. It is the only
// package that reads configuration; platform packages and adapters receive
// Options structs whose fields name their keys. Load is what every command
// calls.
package wire
