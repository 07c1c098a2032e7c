package command

import (
	"fmt"
	"io"
)

// Command is one cloudctl subcommand.
type Command interface {
	// Synopsis is the one-line description shown in command lists.
	Synopsis() string
	// Help is the full help text, shown for -h and "cloudctl help NAME".
	Help() string
	// Run runs the command with the arguments that follow its name and
	// returns the process exit code: 0 ok, 1 error, 2 usage error.
	Run(args []string) int
}

// UI is what the dispatcher hands a command.
type UI struct {
	// Stdout receives results; Stderr receives errors and diagnostics.
	Stdout, Stderr io.Writer
	// Name is the name the command was invoked as, such as "flavor create".
	Name string
}

// CommandFactory builds the command registered under ui.Name, writing to
// ui. It is called for each invocation, including to show help.
type CommandFactory func(ui *UI) Command

// commands maps a command's name (its words joined by single spaces, such
// as "operator raft list-peers") to its factory. Other files add to it with
// register.
var commands = map[string]CommandFactory{
	"version": versionCommand,

	"server members": serverMembersCommand,

	"operator raft list-peers":  raftListPeersCommand,
	"operator raft remove-peer": raftRemovePeerCommand,
	"operator snapshot save":    snapshotSaveCommand,
	"operator snapshot restore": snapshotRestoreCommand,

	"operator gossip keygen":  gossipKeygenCommand,
	"operator gossip keyring": gossipKeyringCommand,

	"tls ca create":   tlsCACreateCommand,
	"tls cert create": tlsCertCreateCommand,

	"flavor create": flavorCreateCommand,
	"flavor list":   flavorListCommand,
	"flavor show":   flavorShowCommand,
	"flavor delete": flavorDeleteCommand,

	"instance create":      instanceCreateCommand,
	"instance list":        instanceListCommand,
	"instance status":      instanceOrGroupStatusCommand,
	"instance stop":        instanceOrGroupStopCommand,
	"instance plan":        instancePlanCommand,
	"instance run":         instanceRunCommand,
	"instance history":     instanceHistoryCommand,
	"instance revert":      instanceRevertCommand,
	"instance delete":      instanceDeleteCommand,
	"instance actions":     instanceActionsCommand,
	"instance migrations":  instanceMigrationsCommand,
	"instance logs":        instanceLogsCommand,
	"instance console":     instanceConsoleCommand,
	"instance diagnostics": instanceDiagnosticsCommand,

	"host list":    hostListCommand,
	"host status":  hostStatusCommand,
	"host enable":  hostEnableCommand,
	"host disable": hostDisableCommand,
	"host drain":   hostDrainCommand,

	"completion": completionCommand,
}

// groups are the synopses of command groups, the proper prefixes of
// command names, shown in help listings.
var groups = map[string]string{
	"flavor":              "Manage flavors, the hardware templates of instances",
	"host":                "Inspect hosts, enable or disable scheduling onto them, and drain them",
	"instance":            "Boot, inspect, operate on, move and delete instances, and run instance specs",
	"operator":            "Cluster maintenance: Raft membership, snapshots and gossip keys",
	"operator raft":       "Inspect and change the Raft peer set",
	"operator snapshot":   "Save and restore snapshots of the cluster state",
	"operator gossip":     "Generate gossip encryption keys and rotate the keyring",
	"operator node-intro": "Issue introduction tokens that let new client agents register",
	"tls":                 "Create the certificate authority and certificates for agent TLS",
	"tls ca":              "Create a certificate authority",
	"tls cert":            "Create certificates signed by the CA",
	"server":              "Inspect the servers of the cluster",
}

// register adds a command to the table, for files that define commands
// outside it (agent.go and lifecycle.go call it from init). It panics on an empty or
// duplicate name, which is a programming error.
func register(name string, f CommandFactory) {
	if name == "" || f == nil {
		panic("command: register needs a name and a factory")
	}
	if _, dup := commands[name]; dup {
		panic(fmt.Sprintf("command: %q registered twice", name))
	}
	commands[name] = f
}
