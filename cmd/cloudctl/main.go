// Command cloudctl is the command-line interface of Stratus: the client of
// the native HTTP API and the agent itself ("cloudctl agent"). It must
// not hold logic of its own: everything is in package command.
package main

import (
	"os"

	"github.com/stratus-cloud/stratus/command"
)

func main() { os.Exit(command.Run(os.Args[1:], os.Stdout, os.Stderr)) }
