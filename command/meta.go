package command

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/stratus-cloud/stratus/api"
)

// spec declares a command built on the shared machinery: flag parsing
// (including the client flags), -h, argument counts, help text and the API
// client. A spec becomes a CommandFactory with factory.
type spec struct {
	synopsis string
	// args is the usage after the command name, such as "[options] NAME".
	args string
	// help is the description paragraph(s) of the help text.
	help string
	// nargs is the accepted number of positional arguments.
	nargs argRange
	// local commands get neither the client flags nor a client.
	local bool
	// list commands also take -t, a Go template for their output.
	list bool
	// setup defines the command's own flags on fs and returns the function
	// that runs the command once they are parsed.
	setup func(fs *flag.FlagSet) runFunc
}

// runFunc runs a command with its positional arguments.
type runFunc func(e *env, args []string) int

// argRange bounds the number of positional arguments; max < 0 is unlimited.
type argRange struct{ min, max int }

func exactly(n int) argRange { return argRange{n, n} }
func atLeast(n int) argRange { return argRange{n, -1} }

func (r argRange) check(n int) string {
	switch {
	case r.min == r.max && n != r.min:
		if r.min == 0 {
			return "this command takes no arguments"
		}
		return fmt.Sprintf("this command takes %d argument(s), got %d", r.min, n)
	case n < r.min:
		return fmt.Sprintf("this command needs at least %d argument(s), got %d", r.min, n)
	case r.max >= 0 && n > r.max:
		return fmt.Sprintf("this command takes at most %d argument(s), got %d", r.max, n)
	}
	return ""
}

func (s *spec) factory() CommandFactory {
	return func(ui *UI) Command { return &specCommand{spec: s, ui: ui} }
}

// specCommand is a spec bound to a UI.
type specCommand struct {
	spec *spec
	ui   *UI
}

// env is what a running command works with.
type env struct {
	ui     *UI
	client *api.Client
	// The client flags.
	address, token string
	json, stale    bool
	// tls are the client flags of an HTTPS agent (-ca-cert, …).
	tls api.TLSConfig
	// tmpl is -t: a Go template that formats the output.
	tmpl string
}

// Synopsis implements Command.
func (c *specCommand) Synopsis() string { return c.spec.synopsis }

// flagSet returns the command's flags (client flags first) and its runFunc.
func (c *specCommand) flagSet(e *env) (*flag.FlagSet, runFunc) {
	fs := flag.NewFlagSet(c.ui.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if !c.spec.local {
		fs.StringVar(&e.address, "address", "", "The HTTP address of the Stratus agent.\nDefaults to $"+api.EnvAddress+", else "+api.DefaultAddress+".")
		fs.StringVar(&e.token, "token", "", "The identity token sent with requests. Defaults to $"+api.EnvToken+", else $OS_TOKEN, else the token `cloudctl login` saved for the address, else a login with the OS_USERNAME and OS_PASSWORD of an openrc.")
		fs.BoolVar(&e.json, "json", false, "Print the result as JSON instead of human-readable text.")
		fs.BoolVar(&e.stale, "stale", false, "Let any server answer reads from its local state, not only the leader.")
		fs.StringVar(&e.tls.CACert, "ca-cert", "", "A PEM `FILE` of the CA that signed an HTTPS agent's certificate. Defaults to $"+api.EnvCACert+".")
		fs.StringVar(&e.tls.ClientCert, "client-cert", "", "A PEM `FILE` of the client certificate an agent with verify_https_client requires. Defaults to $"+api.EnvClientCert+".")
		fs.StringVar(&e.tls.ClientKey, "client-key", "", "A PEM `FILE` of the client certificate's key. Defaults to $"+api.EnvClientKey+".")
		fs.StringVar(&e.tls.ServerName, "tls-server-name", "", "The `NAME` the agent's certificate must carry, if not the address's host. Defaults to $"+api.EnvTLSServerName+".")
		fs.BoolVar(&e.tls.Insecure, "tls-skip-verify", false, "Accept any certificate from the agent (testing only). Defaults to $"+api.EnvSkipVerify+".")
		if c.spec.list {
			fs.StringVar(&e.tmpl, "t", "", "Format the output with a Go `TEMPLATE` (text/template) over the data -json prints.")
		}
	}
	return fs, c.spec.setup(fs)
}

// Help implements Command: usage, description, then the command's own
// options and the client options, generated from the flag definitions.
func (c *specCommand) Help() string {
	fs, _ := c.flagSet(&env{})
	var own, client strings.Builder
	fs.VisitAll(func(f *flag.Flag) {
		w := &own
		if isClientFlag(f.Name) && !c.spec.local {
			w = &client
		}
		typ, usage := flag.UnquoteUsage(f)
		fmt.Fprintf(w, "  -%s", f.Name)
		if typ != "" {
			fmt.Fprintf(w, " <%s>", typ)
		}
		fmt.Fprintf(w, "\n    %s", strings.ReplaceAll(usage, "\n", "\n    "))
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "[]" {
			fmt.Fprintf(w, " Defaults to %s.", f.DefValue)
		}
		w.WriteString("\n\n")
	})
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s\n\n", strings.TrimSpace("cloudctl "+c.ui.Name+" "+c.spec.args))
	for _, line := range strings.Split(strings.TrimSpace(c.spec.help), "\n") {
		b.WriteString(strings.TrimRight("  "+line, " ") + "\n")
	}
	if own.Len() > 0 {
		b.WriteString("\nOptions:\n\n" + strings.TrimRight(own.String(), "\n") + "\n")
	}
	if client.Len() > 0 {
		b.WriteString("\nClient Options:\n\n" + strings.TrimRight(client.String(), "\n") + "\n")
	}
	return b.String()
}

func isClientFlag(name string) bool {
	switch name {
	case "address", "token", "json", "stale", "ca-cert", "client-cert", "client-key", "tls-server-name", "tls-skip-verify":
		return true
	}
	return false
}

// Run implements Command.
func (c *specCommand) Run(args []string) int {
	e := &env{ui: c.ui}
	fs, run := c.flagSet(e)
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(c.ui.Stdout, c.Help())
		return 0
	}
	if err != nil {
		return e.usage("%v", err)
	}
	if msg := c.spec.nargs.check(len(pos)); msg != "" {
		return e.usage("%s", msg)
	}
	if !c.spec.local {
		cfg := api.DefaultConfig()
		if e.address != "" && e.address != cfg.Address {
			cfg.Address = e.address
			cfg.Token, cfg.Credentials = api.DefaultToken(cfg.Address)
		}
		if e.token != "" {
			cfg.Token = e.token
		}
		cfg.TLS = mergeTLS(cfg.TLS, e.tls)
		if e.client, err = api.NewClient(cfg); err != nil {
			return e.fail("Error initializing client: %v", err)
		}
	}
	return run(e, pos)
}

// parseInterspersed parses flags anywhere among the positional arguments
// (stdlib flag stops at the first positional), until a "--" terminator.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" &&
			(consumed < 2 || !takesValue(fs, args[consumed-2])) {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// takesValue reports whether arg is a flag of fs that consumes the next
// argument as its value (so a "--" after it is that value, not the end of
// the flags).
func takesValue(fs *flag.FlagSet, arg string) bool {
	name := strings.TrimLeft(arg, "-")
	if !strings.HasPrefix(arg, "-") || strings.Contains(name, "=") {
		return false
	}
	f := fs.Lookup(name)
	if f == nil {
		return false
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return !ok || !b.IsBoolFlag()
}

// queryOptions are the read options set by the client flags.
func (e *env) queryOptions() *api.QueryOptions {
	return &api.QueryOptions{AllowStale: e.stale}
}

// fail prints an error ("Error doing X: ...") to stderr and returns 1.
func (e *env) fail(format string, args ...any) int {
	fmt.Fprintf(e.ui.Stderr, strings.TrimSuffix(format, "\n")+"\n", args...)
	return 1
}

// usage prints a usage error to stderr and returns 2.
func (e *env) usage(format string, args ...any) int {
	fmt.Fprintf(e.ui.Stderr, "Error: %s\nRun 'cloudctl %s -h' for usage.\n", fmt.Sprintf(format, args...), e.ui.Name)
	return 2
}

// mergeTLS lays the TLS flags given over the environment's settings.
func mergeTLS(env *api.TLSConfig, flags api.TLSConfig) *api.TLSConfig {
	var t api.TLSConfig
	if env != nil {
		t = *env
	}
	for _, f := range []struct {
		dst *string
		v   string
	}{
		{&t.CACert, flags.CACert}, {&t.ClientCert, flags.ClientCert}, {&t.ClientKey, flags.ClientKey}, {&t.ServerName, flags.ServerName},
	} {
		if f.v != "" {
			*f.dst = f.v
		}
	}
	t.Insecure = t.Insecure || flags.Insecure
	if t == (api.TLSConfig{}) {
		return nil
	}
	return &t
}
