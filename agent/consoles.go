package agent

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/agent/console"
	"github.com/stratus-cloud/stratus/agent/ui"
	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/gossip"
	"github.com/stratus-cloud/stratus/virt"
)

// ConsoleConfig is the client's console block: where the console proxies
// listen and the URL users reach them at.
type ConsoleConfig struct {
	// Listen is an extra address (host:port) for the websocket proxies
	// and the noVNC page, Nova's novncproxy port; empty serves them on
	// the HTTP API's port only.
	Listen string `hcl:"listen,optional"`
	// PublicURL is the base URL users reach the websocket proxy at
	// ("https://console.example.com"); empty is the listen address, or
	// the agent's public_url, or its advertised HTTP address.
	PublicURL string `hcl:"public_url,optional"`
	// XVPVNCListen is where the plain TCP VNC proxy listens (Nova's
	// xvpvncproxy, port 6081); empty picks a free port on the bind
	// address, "off" disables it.
	XVPVNCListen string `hcl:"xvpvnc_listen,optional"`
	// TokenTTL is how long a console URL stays usable ("10m").
	TokenTTL string `hcl:"token_ttl,optional"`
}

// tokenTTL parses token_ttl (0 when unset: the servers' default).
func (cc *ConsoleConfig) tokenTTL() (time.Duration, error) {
	if cc == nil || cc.TokenTTL == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(cc.TokenTTL)
	if err != nil || d <= 0 || d > 24*time.Hour {
		return 0, fmt.Errorf("console token_ttl %q must be a duration between 0 and 24h", cc.TokenTTL)
	}
	return d, nil
}

// checkConsole checks the client's console block when the configuration
// is finalized, before anything starts.
func (c *ClientConfig) checkConsole() error {
	_, err := c.Console.tokenTTL()
	return err
}

// hostDriver is one host this agent runs and its driver.
type hostDriver struct {
	client *client.Client
	driver virt.Driver
}

// startConsoles starts the console service: on a client agent the
// proxies for its hosts' instances; on any agent the forwarding of
// console requests to the agent that hosts an instance.
func (a *Agent) startConsoles() error {
	cc := &ConsoleConfig{}
	if a.config.Client != nil && a.config.Client.Console != nil {
		cc = a.config.Client.Console
	}
	ttl, err := cc.tokenTTL()
	if err != nil {
		return err
	}
	public := cc.PublicURL
	if cc.Listen != "" && a.config.IsClient() {
		ln, err := net.Listen("tcp", cc.Listen)
		if err != nil {
			return fmt.Errorf("listen for the console proxy: %w", err)
		}
		a.consoleLn = a.secureListener(ln)
		if public == "" {
			public = a.httpScheme() + "://" + a.advertised(ln.Addr())
		}
	}
	if public == "" && a.config.PublicURL != "" {
		// Served on the HTTP port, the proxy is reached where the APIs are.
		public = strings.TrimSuffix(a.config.PublicURL, "/")
	}
	if public == "" {
		public = a.httpScheme() + "://" + a.httpAddr
	}
	var xvp net.Listener
	if a.config.IsClient() && cc.XVPVNCListen != "off" {
		addr := cc.XVPVNCListen
		if addr == "" {
			addr = net.JoinHostPort(a.config.BindAddr, "0")
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("listen for the xvpvnc proxy: %w", err)
		}
		xvp = ln
	}
	cfg := console.Config{RPC: a.self, Local: a.localDriver, AgentAddr: a.agentHTTPAddr,
		PublicURL: public, TokenTTL: ttl, Logger: a.logger.Named("console"),
		Client: a.internodeClient(30 * time.Second), Scheme: a.httpScheme()}
	if xvp != nil {
		cfg.XVPVNCAddr = a.advertised(xvp.Addr())
	}
	a.consoles = console.New(cfg)
	if xvp != nil {
		a.bgWG.Add(1)
		go func() {
			defer a.bgWG.Done()
			a.consoles.ServeXVPVNC(xvp)
		}()
	}
	if a.consoleLn != nil {
		mux := http.NewServeMux()
		a.mountConsoleProxy(mux)
		uiHandler := ui.Handler()
		mux.Handle(ui.MountPath+"/", uiHandler)
		a.consoleServer = a.httpLimits().newHTTPServer(mux, ifaceNative, a.logger)
		a.consoleServer.Handler = a.forwarded(a.consoleServer.Handler)
		a.bgWG.Add(1)
		go func() {
			defer a.bgWG.Done()
			if err := a.consoleServer.Serve(a.consoleLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
				a.logger.Error("console proxy stopped", "error", err)
			}
		}()
	}
	a.logger.Info("console proxy ready", "public_url", public, "xvpvnc", cfg.XVPVNCAddr)
	return nil
}

// stopConsoles ends the console listeners and every proxied session.
func (a *Agent) stopConsoles() {
	if a.consoleServer != nil {
		_ = a.consoleServer.Close()
	} else if a.consoleLn != nil {
		_ = a.consoleLn.Close()
	}
	if a.consoles != nil {
		_ = a.consoles.Close()
	}
}

// advertised is a listener's address as others reach it: the advertise
// address when it listens on every interface.
func (a *Agent) advertised(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return addr.String()
	}
	host := tcp.IP.String()
	if tcp.IP.IsUnspecified() {
		host = a.config.Advertise
	}
	return net.JoinHostPort(host, strconv.Itoa(tcp.Port))
}

// mountConsoleProxy serves the console websocket proxies on mux.
func (a *Agent) mountConsoleProxy(mux *http.ServeMux) {
	if a.consoles == nil {
		return
	}
	h := a.consoles.Handler()
	mux.Handle("GET "+console.VNCPath, h)
	mux.Handle("GET "+console.SerialPath, h)
}

// localDriver is the driver of a host this agent runs, or nil.
func (a *Agent) localDriver(hostID string) virt.Driver {
	if hostID == "" {
		return nil
	}
	for _, hd := range a.hostDrivers {
		if hd.client.HostID() == hostID {
			return hd.driver
		}
	}
	return nil
}

// agentHTTPAddr is the HTTP address of the agent that is a gossip member.
func (a *Agent) agentHTTPAddr(member string) (string, bool) {
	if a.gossip == nil {
		return "", false
	}
	for _, m := range a.gossip.Members() {
		if m.Name == member && m.Status == gossip.StatusAlive && m.Meta.HTTPAddr != "" {
			return m.Meta.HTTPAddr, true
		}
	}
	return "", false
}
