package command

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/agent"
)

func init() {
	register("agent", agentCommand)
	groups["agent"] = "Run a Stratus agent (server, hypervisor client, or both)"
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// agentFlags are the agent's flags; unset ones leave the config file's
// value alone.
type agentFlags struct {
	dev, server, client, logJSON                   bool
	configFile, dataDir, bind, advertise           string
	nodeName, region, az, logLevel, driver         string
	bootstrapExpect, httpPort, rpcPort, gossipPort int
	devHosts                                       int
	devTLS                                         bool
	join                                           stringList
	acl                                            optionalBool
}

// optionalBool is a boolean flag that remembers whether it was given,
// so the config file's value stands unless the flag overrides it.
type optionalBool struct{ set, value bool }

func (b *optionalBool) String() string   { return strconv.FormatBool(b.value) }
func (b *optionalBool) IsBoolFlag() bool { return true }
func (b *optionalBool) Set(v string) error {
	parsed, err := strconv.ParseBool(v)
	if err != nil {
		return err
	}
	b.set, b.value = true, parsed
	return nil
}

func (f *agentFlags) define(fs *flag.FlagSet) {
	fs.BoolVar(&f.dev, "dev", false, "Run a single-node development cloud with an embedded data dir.")
	fs.BoolVar(&f.server, "server", false, "Run the server role (a Raft voter).")
	fs.BoolVar(&f.client, "client", false, "Run the hypervisor-agent role.")
	fs.StringVar(&f.configFile, "config", "", "Read configuration from this HCL file.")
	fs.StringVar(&f.dataDir, "data-dir", "", "Directory for Raft and local state.")
	fs.StringVar(&f.bind, "bind", "", "IP address to bind every listener to.")
	fs.StringVar(&f.advertise, "advertise", "", "IP address other members reach this agent at.")
	fs.StringVar(&f.nodeName, "node-name", "", "Name of this node (default: hostname).")
	fs.StringVar(&f.region, "region", "", "Region of this agent (default: global).")
	fs.StringVar(&f.az, "az", "", "Availability zone of this agent (default: nova).")
	fs.IntVar(&f.bootstrapExpect, "bootstrap-expect", -1, "Number of servers to wait for before bootstrapping Raft.")
	fs.IntVar(&f.httpPort, "http-port", -1, "HTTP API port (default 8774; 0 picks a free port).")
	fs.IntVar(&f.rpcPort, "rpc-port", -1, "RPC and Raft port (default 8776; 0 picks a free port).")
	fs.IntVar(&f.gossipPort, "gossip-port", -1, "Gossip port, TCP and UDP (default 8777; 0 picks a free port).")
	fs.Var(&f.join, "join", "Gossip address ip:port of any member to join (repeatable).")
	fs.StringVar(&f.driver, "driver", "", "Virt driver of the client role: fake (default), libvirt (real QEMU/KVM guests through libvirtd), vmware (a vCenter cluster as one host) or ironic (one host per bare-metal node); see website/agent.md and website/drivers.md.")
	fs.IntVar(&f.devHosts, "dev-hosts", 0, "Add this many simulated fake hosts behind this agent.")
	fs.BoolVar(&f.devTLS, "tls", false, "With -dev: serve HTTPS with a CA and certificate made in the data dir (dev-tls/).")
	fs.StringVar(&f.logLevel, "log-level", "", "Log level: trace, debug, info, warn or error.")
	fs.BoolVar(&f.logJSON, "log-json", false, "Write logs as JSON.")
	fs.Var(&f.acl, "acl", "Require identity tokens on the native API (-acl=false opens it). Defaults to on, except in dev mode; overrides the config's acl block.")
}

// config merges the flags over the config file.
func (f *agentFlags) config() (*agent.Config, error) {
	cfg := &agent.Config{}
	if f.configFile != "" {
		var err error
		if cfg, err = agent.LoadConfigFile(f.configFile); err != nil {
			return nil, err
		}
	}
	if cfg.Server == nil {
		cfg.Server = &agent.ServerConfig{}
	}
	if cfg.Client == nil {
		cfg.Client = &agent.ClientConfig{}
	}
	if cfg.Ports == nil {
		cfg.Ports = &agent.PortsConfig{}
	}
	setStr := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	setStr(&cfg.DataDir, f.dataDir)
	setStr(&cfg.BindAddr, f.bind)
	setStr(&cfg.Advertise, f.advertise)
	setStr(&cfg.NodeName, f.nodeName)
	setStr(&cfg.Region, f.region)
	setStr(&cfg.AZ, f.az)
	setStr(&cfg.LogLevel, f.logLevel)
	setStr(&cfg.Client.Driver, f.driver)
	if f.devHosts > 0 {
		cfg.Client.SimulatedHosts = f.devHosts
	}
	cfg.LogJSON = cfg.LogJSON || f.logJSON
	cfg.DevMode = f.dev
	cfg.DevTLS = f.devTLS
	if f.acl.set {
		on := f.acl.value
		cfg.ACL = &agent.ACLConfig{Enabled: &on}
	}
	cfg.Server.Enabled = cfg.Server.Enabled || f.server
	cfg.Client.Enabled = cfg.Client.Enabled || f.client
	if f.bootstrapExpect >= 0 {
		cfg.Server.BootstrapExpect = f.bootstrapExpect
	}
	for _, p := range []struct {
		v   int
		dst **int
	}{{f.httpPort, &cfg.Ports.HTTP}, {f.rpcPort, &cfg.Ports.RPC}, {f.gossipPort, &cfg.Ports.Gossip}} {
		if p.v >= 0 {
			v := p.v
			*p.dst = &v
		}
	}
	cfg.Server.RetryJoin = append(cfg.Server.RetryJoin, f.join...)
	cfg.Client.RetryJoin = append(cfg.Client.RetryJoin, f.join...)
	cfg.Version = Version
	if err := cfg.Finalize(); err != nil {
		return nil, err
	}
	if cfg.DataDir == "" {
		return nil, fmt.Errorf("a data dir is required (--data-dir) outside dev mode")
	}
	return cfg, nil
}

var agentCommand = (&spec{
	synopsis: "Run a Stratus agent",
	args:     "[options]",
	help: `Run a Stratus agent. With --server it is a Raft voter that holds the
  replicated state; with --client it drives a hypervisor; --dev runs a
  single-node cloud with an embedded data dir and no setup.

  Flags override the config file (--config). Port 0 picks a free port; the
  agent prints the ports it bound. SIGINT or SIGTERM leaves the cluster
  gracefully (a leader hands over first); a second signal exits at once.`,
	nargs: exactly(0),
	local: true,
	setup: func(fs *flag.FlagSet) runFunc {
		f := &agentFlags{}
		f.define(fs)
		return func(e *env, _ []string) int { return runAgent(e, f) }
	},
}).factory()

func runAgent(e *env, f *agentFlags) int {
	cfg, err := f.config()
	if err != nil {
		fmt.Fprintf(e.ui.Stderr, "Error starting agent: %v\n", err)
		return 1
	}
	level := hclog.LevelFromString(cfg.LogLevel)
	if level == hclog.NoLevel {
		fmt.Fprintf(e.ui.Stderr, "Error starting agent: unknown log level %q\n", cfg.LogLevel)
		return 1
	}
	logFile, err := cfg.OpenLogFile()
	if err != nil {
		fmt.Fprintf(e.ui.Stderr, "Error starting agent: %v\n", err)
		return 1
	}
	if logFile != nil {
		defer logFile.Close()
	}
	// The last lines stay in memory too, for GET /v1/agent/logs and
	// `cloudctl operator debug`.
	cfg.LogBuffer = agent.NewLogBuffer(agent.DefaultLogBufferLines)
	out := io.MultiWriter(agent.LogOutput(e.ui.Stderr, logFile), cfg.LogBuffer)
	logger := hclog.New(&hclog.LoggerOptions{Name: "agent", Level: level, JSONFormat: cfg.LogJSON, Output: out})

	sigCh := make(chan os.Signal, 2)
	signal.Notify(sigCh, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigCh)

	a, err := agent.New(cfg, logger)
	if err != nil {
		fmt.Fprintf(e.ui.Stderr, "Error starting agent: %v\n", err)
		return 1
	}
	printBanner(e, cfg, a)

	sig := <-sigCh
	logger.Info("caught signal, leaving the cluster", "signal", sig.String())
	done := make(chan struct{})
	go func() {
		if err := a.Leave(); err != nil {
			logger.Warn("leave", "error", err)
		}
		_ = a.Shutdown()
		close(done)
	}()
	select {
	case <-done:
		return 0
	case sig = <-sigCh:
		logger.Warn("second signal, exiting without a graceful leave", "signal", sig.String())
		return 1
	}
}

func printBanner(e *env, cfg *agent.Config, a *agent.Agent) {
	roles := []string{}
	if cfg.IsServer() {
		roles = append(roles, "server")
	}
	if cfg.IsClient() {
		roles = append(roles, "client")
	}
	w := e.ui.Stdout
	mode := ""
	if cfg.DevMode {
		mode = " in dev mode"
	}
	fmt.Fprintf(w, "==> Stratus agent started%s\n", mode)
	fmt.Fprintf(w, "    Node:   %s\n    Roles:  %s\n    Region: %s (availability zone %s)\n",
		cfg.NodeName, strings.Join(roles, ", "), cfg.Region, cfg.AZ)
	fmt.Fprintf(w, "    HTTP:   %s\n", a.HTTPURL())
	if rpcAddr := a.RPCAddr(); rpcAddr != "" {
		fmt.Fprintf(w, "    RPC:    %s\n", rpcAddr)
	}
	fmt.Fprintf(w, "    Gossip: %s\n    Data:   %s\n", a.GossipAddr(), cfg.DataDir)
	if cfg.DevMode {
		fmt.Fprintf(w, "\n==> Try it:\n    export CLOUDCTL_ADDR=%s\n", a.HTTPURL())
		if ca := a.HTTPSCACert(); ca != "" {
			fmt.Fprintf(w, "    export CLOUDCTL_CACERT=%s\n", ca)
		}
		fmt.Fprintf(w, "    cloudctl flavor list\n    cloudctl server members\n")
		fmt.Fprintf(w, "    open %s/ui/   # the web UI: log in as admin/admin or demo/demo\n", a.HTTPURL())
	}
}
