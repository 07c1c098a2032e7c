package command

import (
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/stratus-cloud/stratus/api"
)

var openrcCommand = (&spec{
	synopsis: "Print the OS_* variables OpenStack clients need",
	args:     "[options]",
	help: `Print shell exports that point OpenStack clients (openstack, nova,
  gophercloud, Terraform) at this cloud's identity service, for one user.
  Use it as:  eval "$(cloudctl openrc --user demo)"
  -format clouds-yaml prints a clouds.yaml instead, for tools that read
  one (openstack --os-cloud, Terraform, gophercloud's clientconfig):
    cloudctl openrc -format clouds-yaml > ~/.config/openstack/clouds.yaml
  -format ec2 issues an EC2 credential of the user on the project and
  prints the AWS_* variables the AWS CLI and SDKs read for the EC2 API:
    eval "$(cloudctl openrc -format ec2 --user demo)"; aws ec2 describe-instances

  Dev mode seeds the users admin (project admin, role admin) and demo
  (project demo, role member), each with its name as password; that is
  the default password here unless -password is given.`,
	nargs: exactly(0),
	setup: func(fs *flag.FlagSet) runFunc {
		user := fs.String("user", "admin", "User name.")
		project := fs.String("project", "", "Project name (default: the user name, as dev mode seeds them).")
		password := fs.String("password", "", "Password (default: the dev-mode password, the user name).")
		region := fs.String("region", "RegionOne", "Region of the catalog.")
		format := fs.String("format", "shell", "Output format: shell (exports), clouds-yaml, or ec2 (AWS_* exports with a new EC2 credential).")
		cloud := fs.String("cloud", "stratus", "With -format clouds-yaml: the cloud's name (openstack --os-cloud NAME).")
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
			authURL := strings.TrimSuffix(e.client.Address(), "/") + "/identity/v3"
			cacert := caCertFile(e)
			switch *format {
			case "shell":
			case "ec2":
				return openrcEC2(e, *user, proj)
			case "clouds-yaml":
				out := cloudsYAML(*cloud, authURL, *user, pass, proj, *region)
				if cacert != "" {
					b, _ := json.Marshal(cacert)
					out += "    cacert: " + string(b) + "\n"
				}
				fmt.Fprint(e.ui.Stdout, out)
				return 0
			default:
				return e.usage("-format must be shell, clouds-yaml or ec2, got %q", *format)
			}
			vars := [][2]string{
				{"OS_AUTH_URL", authURL},
				{"OS_IDENTITY_API_VERSION", "3"},
				{"OS_USERNAME", *user},
				{"OS_PASSWORD", pass},
				{"OS_PROJECT_NAME", proj},
				{"OS_USER_DOMAIN_NAME", "Default"},
				{"OS_PROJECT_DOMAIN_NAME", "Default"},
				{"OS_REGION_NAME", *region},
				{"OS_INTERFACE", "public"},
			}
			if cacert != "" {
				vars = append(vars, [2]string{"OS_CACERT", cacert})
			}
			for _, v := range vars {
				fmt.Fprintf(e.ui.Stdout, "export %s=%s\n", v[0], shellQuote(v[1]))
			}
			return 0
		}
	},
}).factory()

// cloudsYAML is a clouds.yaml with one cloud. Every value is written as
// a JSON string, which is a YAML double-quoted scalar, so no name or
// password can break the document.
func cloudsYAML(cloud, authURL, user, password, project, region string) string {
	q := func(s string) string {
		b, _ := json.Marshal(s)
		return string(b)
	}
	return fmt.Sprintf(`clouds:
  %s:
    auth:
      auth_url: %s
      username: %s
      password: %s
      project_name: %s
      user_domain_name: "Default"
      project_domain_name: "Default"
    region_name: %s
    interface: "public"
    identity_api_version: 3
`, q(cloud), q(authURL), q(user), q(password), q(project), q(region))
}

// caCertFile is the CA file the client trusts (-ca-cert or
// $CLOUDCTL_CACERT), as an absolute path for the clients that read it.
func caCertFile(e *env) string {
	f := mergeTLS(api.DefaultConfig().TLS, e.tls)
	if f == nil || f.CACert == "" {
		return ""
	}
	if abs, err := filepath.Abs(f.CACert); err == nil {
		return abs
	}
	return f.CACert
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

func init() {
	register("openrc", openrcCommand)
}
