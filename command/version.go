package command

import (
	"flag"
	"fmt"
	"runtime"
	"strings"
)

// Version is cloudctl's version, without a leading "v". Release builds set
// it with -ldflags "-X github.com/stratus-cloud/stratus/command.Version=X.Y.Z".
var Version = "0.1.0"

var versionCommand = (&spec{
	synopsis: "Print the cloudctl version",
	help:     "Print the version of cloudctl and of the Go toolchain that built it.",
	nargs:    exactly(0),
	local:    true,
	setup: func(*flag.FlagSet) runFunc {
		return func(e *env, _ []string) int {
			fmt.Fprintf(e.ui.Stdout, "cloudctl v%s\nGo: %s %s/%s\n",
				strings.TrimPrefix(Version, "v"), runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return 0
		}
	},
}).factory()
