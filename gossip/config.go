package gossip

import (
	"bytes"
	"errors"
	"log"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/memberlist"
)

// Config configures a Pool.
type Config struct {
	// NodeName is the memberlist name; it must be unique in the pool.
	NodeName string
	// BindAddr is the address to listen on for gossip (TCP and UDP).
	// Default "0.0.0.0".
	BindAddr string
	// BindPort is the gossip port. 0 lets the kernel pick a free port;
	// UDP is then bound to the same port TCP got (retrying up to ten
	// times if that port is taken for UDP). Pool.BindPort reports it.
	BindPort int
	// AdvertiseAddr is the address other members use to reach this one.
	// Empty means memberlist derives it: BindAddr, or a private IP of this
	// host when BindAddr is 0.0.0.0.
	AdvertiseAddr string
	// AdvertisePort is the port other members use. 0 means the bound
	// port. It is ignored when BindPort is 0, because memberlist then
	// always advertises the port it picked.
	AdvertisePort int
	// Meta is the local node's initial metadata.
	Meta Meta
	// Logger receives this package's and memberlist's logs. Memberlist's
	// DEBUG chatter (one line per connection) is emitted at Trace so a
	// Debug-level agent log stays readable. Default: a Warn-level logger
	// on stderr.
	Logger hclog.Logger
	// Fast selects tight timers for loopback tests and dev mode: a stopped
	// node is declared dead in roughly 1-2.5 s (10 to 1,000 members)
	// instead of ~5-15 s. Do not use it across a real network; it trades
	// false suspicion for speed.
	Fast bool
	// PushPullInterval, when positive, replaces the interval of the full
	// state exchanges (anti-entropy) that Fast (5 s) or the LAN timers
	// (30 s) set; memberlist stretches it further in pools of more than
	// 32 members. Failure detection does not wait for it: probes and
	// gossip carry suspicions and deaths. The host-death benchmark
	// lengthens it for its simulated agents, which share two cores by
	// the hundred.
	PushPullInterval time.Duration
	// RetransmitMult, when positive, replaces how many times (× log10 of
	// the pool size) this member retransmits each broadcast it gossips
	// (2 with Fast, 4 otherwise).
	RetransmitMult int
	// ProbeInterval, when positive, replaces how often this member probes
	// a peer (200 ms with Fast, 1 s otherwise). It sets only this
	// member's probing and its own suspicion timers: a suspicion another
	// member gossips is timed by each receiver's own configuration, so
	// members with the usual interval still declare a death as fast as
	// they would have once they hear of the suspicion. The host-death
	// benchmark lengthens it for its simulated agents.
	ProbeInterval time.Duration
	// ProbeTimeout, when positive, replaces how long this member waits
	// for a direct probe's answer before it asks others to probe
	// indirectly (100 ms with Fast, 500 ms otherwise). It must be shorter
	// than the probe interval.
	ProbeTimeout time.Duration
	// GossipInterval, when positive, replaces how often this member
	// gossips its pending broadcasts to a few random peers (100 ms with
	// Fast, 200 ms otherwise). A longer one sends the same broadcasts in
	// fewer, fuller packets and spreads them more slowly.
	GossipInterval time.Duration
	// EventBuffer is the capacity of the Events channel. Default 1024.
	EventBuffer int
	// SecretKey, when set, encrypts gossip (AES; 16, 24 or 32 bytes). All
	// members must share it.
	SecretKey []byte
	// KeyringFile, when set, persists the keyring across restarts: it is
	// written whenever the keyring changes and, when it exists at start,
	// used instead of SecretKey (see Pool.Keyring).
	KeyringFile string
}

const (
	defaultEventBuffer = 1024
	defaultBindAddr    = "0.0.0.0"

	// lanDeadNodeReclaimTime lets a node that crashed and restarted on a
	// different address (typically a new ephemeral port, or a new IP after
	// re-provisioning) take its old name back shortly after it was
	// declared dead, instead of being rejected as a name conflict until
	// memberlist forgets the dead node.
	lanDeadNodeReclaimTime  = 30 * time.Second
	fastDeadNodeReclaimTime = time.Second
)

// withDefaults validates cfg and fills in defaults.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.NodeName == "" {
		return cfg, errors.New("gossip: Config.NodeName is required")
	}
	if err := cfg.Meta.validate(); err != nil {
		return cfg, err
	}
	if cfg.BindAddr == "" {
		cfg.BindAddr = defaultBindAddr
	}
	if cfg.BindPort < 0 || cfg.BindPort > 65535 || cfg.AdvertisePort < 0 || cfg.AdvertisePort > 65535 {
		return cfg, errors.New("gossip: BindPort and AdvertisePort must be within 0-65535")
	}
	if cfg.EventBuffer <= 0 {
		cfg.EventBuffer = defaultEventBuffer
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.New(&hclog.LoggerOptions{Name: "gossip", Level: hclog.Warn})
	}
	return cfg, nil
}

// memberlistConfig translates cfg into a memberlist configuration. The
// delegates are attached by the caller.
func (cfg Config) memberlistConfig() *memberlist.Config {
	var c *memberlist.Config
	if cfg.Fast {
		c = memberlist.DefaultLocalConfig()
		// Lifeguard's suspicion: a suspect becomes dead after
		// SuspicionMult × log10(members) × ProbeInterval (at least
		// SuspicionMult × ProbeInterval) once SuspicionMult-2 other
		// members have confirmed the suspicion, and only after
		// SuspicionMaxTimeoutMult times that if none has. With 200 ms
		// probes and multiplier 3: 0.6 s up to 10 members, 1.2 s at 100,
		// 1.8 s at 1,000 — so the servers' state shows a crashed agent's
		// hosts down within about 2.5 s at that size
		// (website/performance.md) — while one slow prober alone needs
		// 6× as long (3.6 s in a small pool) to have a live member
		// declared dead. A member has the whole probe interval to answer
		// (indirect and TCP probes start after ProbeTimeout). On
		// loopback only CPU starvation makes a member that late, and the
		// servers confirm a failure before acting on it
		// (Pool.ConfirmGone). Pools of fewer than 3 wait for no
		// confirmation (memberlist's rule).
		c.ProbeInterval = 200 * time.Millisecond
		c.ProbeTimeout = 100 * time.Millisecond
		c.SuspicionMult = 3
		c.SuspicionMaxTimeoutMult = 6
		c.PushPullInterval = 5 * time.Second
		c.DeadNodeReclaimTime = fastDeadNodeReclaimTime
		// Loopback bandwidth is free; memberlist's LZW compression is
		// not: a fresh 64 KiB table per packet sent, most of a member's
		// CPU and garbage when many members share one machine. Peers
		// read compressed and plain packets alike.
		c.EnableCompression = false
	} else {
		c = memberlist.DefaultLANConfig()
		c.DeadNodeReclaimTime = lanDeadNodeReclaimTime
	}
	if cfg.PushPullInterval > 0 {
		c.PushPullInterval = cfg.PushPullInterval
	}
	if cfg.RetransmitMult > 0 {
		c.RetransmitMult = cfg.RetransmitMult
	}
	if cfg.ProbeInterval > 0 {
		c.ProbeInterval = cfg.ProbeInterval
	}
	if cfg.ProbeTimeout > 0 {
		c.ProbeTimeout = cfg.ProbeTimeout
	}
	if cfg.GossipInterval > 0 {
		c.GossipInterval = cfg.GossipInterval
	}
	c.Name = cfg.NodeName
	c.BindAddr = cfg.BindAddr
	c.BindPort = cfg.BindPort
	c.AdvertiseAddr = cfg.AdvertiseAddr
	c.AdvertisePort = cfg.AdvertisePort
	if c.AdvertisePort == 0 {
		// DefaultLANConfig advertises 7946 regardless of BindPort; with a
		// fixed BindPort and no explicit advertise port, advertise what we
		// bound. (With BindPort 0 memberlist overwrites this anyway.)
		c.AdvertisePort = cfg.BindPort
	}
	c.Logger = log.New(&logAdapter{logger: cfg.Logger.Named("memberlist")}, "", 0)
	return c
}

// logAdapter turns memberlist's "[LEVEL] memberlist: msg" lines into
// leveled hclog calls. hclog's own StandardLogger with InferLevels would
// map memberlist's DEBUG to Debug, which floods a Debug-level log with a
// line per TCP connection; here it is demoted to Trace.
type logAdapter struct {
	logger hclog.Logger
}

// Write handles one log line; the standard library logger calls Write
// once per Printf.
func (a *logAdapter) Write(p []byte) (int, error) {
	line := bytes.TrimRight(p, "\r\n")
	level := hclog.Info
	for _, pre := range []struct {
		tag   string
		level hclog.Level
	}{
		{"[TRACE]", hclog.Trace},
		{"[DEBUG]", hclog.Trace},
		{"[INFO]", hclog.Info},
		{"[WARN]", hclog.Warn},
		{"[ERR]", hclog.Error},
		{"[ERROR]", hclog.Error},
	} {
		if bytes.HasPrefix(line, []byte(pre.tag)) {
			level = pre.level
			line = bytes.TrimSpace(line[len(pre.tag):])
			break
		}
	}
	line = bytes.TrimPrefix(line, []byte("memberlist: "))
	if a.logger.GetLevel() <= level {
		a.logger.Log(level, string(line))
	}
	return len(p), nil
}
