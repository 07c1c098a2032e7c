// Package command implements cloudctl, Stratus's command-line interface:
// a declarative table of subcommands (commands.go), the dispatcher that
// resolves "cloudctl flavor create ..." to one of them and prints help
// (run.go), and the subcommands themselves.
//
// Every subcommand except "agent" is a thin HTTP client of the native API
// through package api: it parses flags, makes API calls and renders the
// answer as a table, key/value lines or JSON (-json). This package must not
// reach the state store, the FSM, Raft or the RPC layer directly; anything
// a command needs must be exposed by the HTTP API first. The "agent"
// subcommand, which runs an agent in-process, lives in agent.go and adds
// itself to the table with register from its own init function; so do the
// instance operations ("instance pause", "instance resize", …), declared
// in lifecycle.go. Long operations (those, "instance create -wait", "host
// drain") follow their progress with blocking queries and print each
// change, as Nomad's monitors do.
//
// Exit codes are 0 on success, 1 on errors and 2 on usage errors (bad
// flags or arguments). Errors go to stderr as "Error ...: <message>".
package command
