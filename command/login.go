package command

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/stratus-cloud/stratus/api"
)

// stdin is where -password-stdin reads; tests replace it.
var stdin io.Reader = os.Stdin

var loginCommand = (&spec{
	synopsis: "Log in and save an identity token for later commands",
	args:     "[options]",
	help: `Authenticate with the identity service (password method, scoped to a
  project) and save the token in ~/.config/cloudctl/token (0600), tied to
  the agent's address. Later commands send it until it expires or
  'cloudctl logout' revokes it. $CLOUDCTL_TOKEN and -token take
  precedence over a saved token.

  The password comes from -password-stdin (one line), else $OS_PASSWORD;
  the user, project and domain default to $OS_USERNAME, $OS_PROJECT_NAME
  and $OS_USER_DOMAIN_NAME, so 'eval "$(cloudctl openrc)"; cloudctl
  login' works. -print prints the token instead of saving it, for
  'export CLOUDCTL_TOKEN=$(cloudctl login -print ...)'.`,
	nargs: exactly(0),
	setup: func(fs *flag.FlagSet) runFunc {
		user := fs.String("user", os.Getenv(api.EnvOSUsername), "User name. Defaults to $OS_USERNAME.")
		project := fs.String("project", os.Getenv(api.EnvOSProjectName), "Project name (default: the user's name). Defaults to $OS_PROJECT_NAME.")
		domain := fs.String("domain", os.Getenv(api.EnvOSUserDomain), "Domain name of the user and project (default: Default).")
		fromStdin := fs.Bool("password-stdin", false, "Read the password from the first line of standard input.")
		printOnly := fs.Bool("print", false, "Print the token on standard output instead of saving it.")
		return func(e *env, _ []string) int {
			password := os.Getenv(api.EnvOSPassword)
			if *fromStdin {
				line, err := bufio.NewReader(stdin).ReadString('\n')
				if err != nil && err != io.EOF {
					return e.fail("Error reading the password: %v", err)
				}
				password = strings.TrimRight(line, "\r\n")
			}
			if *user == "" || password == "" {
				return e.usage("a user (-user or $OS_USERNAME) and a password (-password-stdin or $OS_PASSWORD) are required")
			}
			l, err := e.client.Login(api.Credentials{User: *user, Password: password, Project: *project, Domain: *domain})
			if err != nil {
				return e.fail("Error logging in: %v", err)
			}
			if *printOnly {
				fmt.Fprintln(e.ui.Stdout, l.Token)
				return 0
			}
			path, err := api.SaveToken(&api.SavedToken{Address: e.client.Address(), Token: l.Token,
				ExpiresAt: l.ExpiresAt, User: l.UserName, Project: l.ProjectName})
			if err != nil {
				return e.fail("Error saving the token: %v", err)
			}
			fmt.Fprintf(e.ui.Stdout, "Logged in as %s on project %s (roles: %s) until %s.\nToken saved in %s.\n",
				l.UserName, l.ProjectName, strings.Join(l.Roles, ", "), l.ExpiresAt.Local().Format("2006-01-02 15:04:05 MST"), path)
			return 0
		}
	},
}).factory()

var logoutCommand = (&spec{
	synopsis: "Revoke the saved identity token and forget it",
	args:     "[options]",
	help: `Revoke the token 'cloudctl login' saved for this agent (or the one
  given with -token / $CLOUDCTL_TOKEN) and delete the token file.`,
	nargs: exactly(0),
	setup: func(fs *flag.FlagSet) runFunc {
		return func(e *env, _ []string) int {
			token := e.token
			if token == "" {
				token = os.Getenv(api.EnvToken)
			}
			saved := api.LoadToken(e.client.Address())
			if token == "" && saved != nil {
				token = saved.Token
			}
			if token == "" {
				return e.fail("Error: not logged in to %s", e.client.Address())
			}
			if err := e.client.Logout(token); err != nil {
				return e.fail("Error revoking the token: %v", err)
			}
			if saved != nil && saved.Token == token {
				if err := api.RemoveToken(); err != nil {
					return e.fail("Error deleting the token file: %v", err)
				}
			}
			fmt.Fprintln(e.ui.Stdout, "Logged out: the token is revoked.")
			return 0
		}
	},
}).factory()

var bootstrapCommand = (&spec{
	synopsis: "Create the cluster's first administrator, once",
	args:     "[options]",
	help: `Create the first administrator of a cluster that has no users yet, as
  'nomad acl bootstrap': user admin with a generated password and the
  admin role on project admin (and the member and reader roles). It needs
  no token and works exactly once; the password is printed only now.
  Dev mode seeds its own users, so there it is refused.`,
	nargs: exactly(0),
	setup: func(fs *flag.FlagSet) runFunc {
		return func(e *env, _ []string) int {
			b, err := e.client.Operator().Bootstrap()
			if err != nil {
				return e.fail("Error bootstrapping: %v", err)
			}
			return e.render(b, func(w io.Writer) {
				fmt.Fprintf(w, "User:      %s (%s)\nPassword:  %s\nProject:   %s (%s)\nDomain:    %s\n\n"+
					"Log in with:  echo '%s' | cloudctl login -user %s -password-stdin\n",
					b.UserName, b.UserID, b.Password, b.ProjectName, b.ProjectID, b.DomainID, b.Password, b.UserName)
			})
		}
	},
}).factory()

func init() {
	register("login", loginCommand)
	register("logout", logoutCommand)
	register("operator bootstrap", bootstrapCommand)
}
