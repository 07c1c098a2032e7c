package command

import (
	"flag"
	"fmt"
	"strings"
)

var openrcCommand = (&spec{
	synopsis: "Print the OS_* variables OpenStack clients need",
	args:     "[options]",
	help: `Print shell exports that point OpenStack clients (openstack, nova,
  gophercloud, Terraform) at this cloud's identity service, for one user.
  Use it as:  eval "$(cloudctl openrc --user demo)"

  Dev mode seeds the users admin (project admin, role admin) and demo
  (project demo, role member), each with its name as password; that is
  the default password here unless -password is given.`,
	nargs: exactly(0),
	setup: func(fs *flag.FlagSet) runFunc {
		user := fs.String("user", "admin", "User name.")
		project := fs.String("project", "", "Project name (default: the user name, as dev mode seeds them).")
		password := fs.String("password", "", "Password (default: the dev-mode password, the user name).")
		region := fs.String("region", "RegionOne", "Region of the catalog.")
		return func(e *env, _ []string) int {
			if *user == "" || strings.ContainsAny(*user, "'\n") {
				fmt.Fprintln(e.ui.Stderr, "Error: -user must be a plain user name")
				return 2
			}
			proj, pass := *project, *password
			if proj == "" {
				proj = *user
			}
			if pass == "" {
				pass = *user
			}
			vars := [][2]string{
				{"OS_AUTH_URL", strings.TrimSuffix(e.client.Address(), "/") + "/identity/v3"},
				{"OS_IDENTITY_API_VERSION", "3"},
				{"OS_USERNAME", *user},
				{"OS_PASSWORD", pass},
				{"OS_PROJECT_NAME", proj},
				{"OS_USER_DOMAIN_NAME", "Default"},
				{"OS_PROJECT_DOMAIN_NAME", "Default"},
				{"OS_REGION_NAME", *region},
				{"OS_INTERFACE", "public"},
			}
			for _, v := range vars {
				fmt.Fprintf(e.ui.Stdout, "export %s=%s\n", v[0], shellQuote(v[1]))
			}
			return 0
		}
	},
}).factory()

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

func init() {
	register("openrc", openrcCommand)
}
