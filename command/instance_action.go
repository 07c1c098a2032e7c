package command

import (
	"fmt"
	"slices"
	"strings"
)

func init() {
	register("instance action", func(ui *UI) Command { return &instanceActionCommand{ui: ui} })
}

// instanceActionCommand is "cloudctl instance action OP [options] ID":
// one entry point for every instance operation, for scripts that take
// the operation as a value; it runs "cloudctl instance OP".
type instanceActionCommand struct{ ui *UI }

// actionOps are the operations "instance action" accepts.
func actionOps() []string {
	ops := make([]string, 0, len(opCommands)+1)
	for name := range opCommands {
		ops = append(ops, name)
	}
	ops = append(ops, "snapshot")
	slices.Sort(ops)
	return ops
}

// Synopsis implements Command.
func (c *instanceActionCommand) Synopsis() string {
	return "Run any operation on an instance, named as an argument"
}

// Help implements Command.
func (c *instanceActionCommand) Help() string {
	return fmt.Sprintf(`Usage: cloudctl instance action OP [options] ID

  Run the operation OP on an instance, exactly as "cloudctl instance OP"
  does, with the same options, output and exit codes; "cloudctl instance
  OP -h" describes each. OP is one of:

    %s
`, strings.Join(actionOps(), ", "))
}

// Run implements Command.
func (c *instanceActionCommand) Run(args []string) int {
	if len(args) == 0 {
		fmt.Fprintf(c.ui.Stderr, "Error: an operation is required\n%s", c.Help())
		return 2
	}
	op := args[0]
	if op == "-h" || op == "--help" || op == "-help" {
		fmt.Fprint(c.ui.Stdout, c.Help())
		return 0
	}
	factory, ok := commands["instance "+op]
	if !ok || !slices.Contains(actionOps(), op) {
		fmt.Fprintf(c.ui.Stderr, "Error: unknown operation %q; it must be one of %s\n", op, strings.Join(actionOps(), ", "))
		return 2
	}
	ui := *c.ui
	ui.Name = "instance " + op
	return factory(&ui).Run(args[1:])
}
