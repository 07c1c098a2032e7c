package command

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// Run runs cloudctl with args (without the program name) and returns the
// process exit code.
func Run(args []string, stdout, stderr io.Writer) int {
	ui := &UI{Stdout: stdout, Stderr: stderr}
	if len(args) == 0 {
		printGroupHelp(stdout, "")
		return 0
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		return runHelp(ui, args[1:])
	case "-v", "-version", "--version":
		args = append([]string{"version"}, args[1:]...)
	case completeCommand:
		return complete(stdout, args[1:])
	}

	words := leadingWords(args)
	for n := len(words); n > 0; n-- {
		name := strings.Join(words[:n], " ")
		if f, ok := commands[name]; ok {
			ui.Name = name
			return f(ui).Run(args[n:])
		}
	}

	n := 0 // words[:n] is the longest group prefix
	for n < len(words) && isGroup(strings.Join(words[:n+1], " ")) {
		n++
	}
	group, rest := strings.Join(words[:n], " "), args[n:]
	switch {
	case n == 0 && len(words) == 0:
		fmt.Fprintf(stderr, "Error: unknown flag %s\nRun 'cloudctl -h' for usage.\n", args[0])
		return 2
	case n < len(words):
		fmt.Fprintf(stderr, "Error: unknown command %q\nRun '%s -h' for a list of commands.\n",
			strings.Join(words[:n+1], " "), strings.TrimSpace("cloudctl "+group))
		return 1
	case len(rest) == 0 || isHelpFlag(rest[0]):
		printGroupHelp(stdout, group)
		return 0
	default:
		fmt.Fprintf(stderr, "Error: 'cloudctl %s' needs a subcommand before %s\n\n", group, rest[0])
		printGroupHelp(stderr, group)
		return 2
	}
}

// runHelp implements "cloudctl help [NAME...]".
func runHelp(ui *UI, args []string) int {
	name := strings.Join(args, " ")
	if f, ok := commands[name]; ok {
		ui.Name = name
		fmt.Fprint(ui.Stdout, f(ui).Help())
		return 0
	}
	if name == "" || isGroup(name) {
		printGroupHelp(ui.Stdout, name)
		return 0
	}
	fmt.Fprintf(ui.Stderr, "Error: unknown command %q\nRun 'cloudctl -h' for a list of commands.\n", name)
	return 1
}

// leadingWords returns the arguments before the first flag.
func leadingWords(args []string) []string {
	for i, a := range args {
		if strings.HasPrefix(a, "-") {
			return args[:i]
		}
	}
	return args
}

func isHelpFlag(a string) bool { return a == "-h" || a == "-help" || a == "--help" }

// isGroup reports whether name is a proper prefix of a command name.
func isGroup(name string) bool {
	for k := range commands {
		if strings.HasPrefix(k, name+" ") {
			return true
		}
	}
	return false
}

// printGroupHelp lists the commands under group ("" for the top level: its
// direct children only; otherwise every command below it).
func printGroupHelp(w io.Writer, group string) {
	prefix := ""
	if group != "" {
		prefix = group + " "
	}
	synopses := map[string]string{}
	for name, f := range commands {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		sub := strings.TrimPrefix(name, prefix)
		if group == "" && strings.Contains(sub, " ") {
			first := strings.Fields(sub)[0]
			if _, leaf := commands[first]; !leaf {
				synopses[first] = groups[first]
			}
			continue
		}
		synopses[sub] = f(&UI{Stdout: io.Discard, Stderr: io.Discard, Name: name}).Synopsis()
	}
	names := make([]string, 0, len(synopses))
	for n := range synopses {
		names = append(names, n)
	}
	sort.Strings(names)

	if group == "" {
		fmt.Fprint(w, "Usage: cloudctl [-version] [-help] <command> [args]\n\n"+
			"  cloudctl is the command-line interface of Stratus, a compute control plane.\n\n"+
			"Commands:\n")
	} else {
		fmt.Fprintf(w, "Usage: cloudctl %s <subcommand> [options] [args]\n\n", group)
		if s := groups[group]; s != "" {
			fmt.Fprintf(w, "  %s.\n\n", s)
		}
		fmt.Fprint(w, "Subcommands:\n")
	}
	tw := tabwriter.NewWriter(w, 0, 8, 4, ' ', 0)
	for _, n := range names {
		fmt.Fprintf(tw, "    %s\t%s\n", n, synopses[n])
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "\nRun '%s <command> -h' for help on a command.\n", strings.TrimSpace("cloudctl "+group))
}
