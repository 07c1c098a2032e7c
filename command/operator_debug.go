package command

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/api"
)

func init() {
	register("operator debug", operatorDebugCommand)
}

// debugProfiles are the Go profiles captured from each server that
// serves them (enable_debug); "profile" is the CPU profile.
var debugProfiles = []string{"goroutine", "heap", "allocs", "mutex", "block", "threadcreate", "profile"}

var operatorDebugCommand = (&spec{
	synopsis: "Capture the cluster's debugging state into one archive",
	args:     "[options]",
	help: `Capture what an operator (or a bug report) needs to see why a cluster
misbehaves, from every server, into one tar.gz archive, as Nomad's
"operator debug" does:

  cluster/raft-configuration.json  the Raft peers (operator raft list-peers)
  cluster/members.json             the gossip members, as the agent asked sees them
  servers/NAME/self.json           each server's configuration and Raft/gossip stats
  servers/NAME/members.json        each server's own view of the gossip pool
  servers/NAME/metrics.prom        each server's /v1/metrics
  servers/NAME/logs.txt            each server's recent log lines (the last
                                   1,000 its agent keeps in memory)
  servers/NAME/pprof/*.prof        Go profiles (goroutine, heap, allocs, mutex,
                                   block, threadcreate and a CPU profile of
                                   -pprof-duration), when the server runs
                                   with enable_debug
  manifest.json                    what was captured, and why anything was not

The servers are found through the agent -address names (its gossip
members with the server role); each is asked at its advertised HTTP
address with the same token and TLS settings. A server that cannot be
reached, or a file it does not serve (profiles without enable_debug), is
listed in the manifest with the reason, and the capture goes on.
Requires an admin token.`,
	nargs: exactly(0),
	setup: func(fs *flag.FlagSet) runFunc {
		output := fs.String("output", ".", "The `DIR` the archive is written to.")
		pprofDuration := fs.Duration("pprof-duration", 2*time.Second, "How long the CPU profile samples (whole seconds, at least 1s).")
		return func(e *env, _ []string) int {
			if *pprofDuration < time.Second {
				return e.usage("-pprof-duration must be at least 1s")
			}
			path, man, err := captureDebug(e.client, *output, *pprofDuration, time.Now().UTC())
			if err != nil {
				return e.fail("Error capturing debug state: %v", err)
			}
			return e.render(man, func(w io.Writer) {
				fmt.Fprintf(w, "Captured %d server(s) into %s\n", len(man.Servers), path)
				for _, s := range man.Servers {
					fmt.Fprintf(w, "  %s (%s): %d file(s)", s.Name, s.HTTPAddr, len(s.Files))
					if len(s.Errors) > 0 {
						fmt.Fprintf(w, ", %d not captured", len(s.Errors))
					}
					fmt.Fprintln(w)
				}
			})
		}
	},
}).factory()

// debugManifest is manifest.json, and the command's -json output.
type debugManifest struct {
	Archive    string
	CapturedAt time.Time
	Agent      string
	// Cluster are the cluster-wide files; Errors what failed of them.
	Cluster []string
	Errors  map[string]string `json:",omitempty"`
	Servers []*debugServer
}

// debugServer is what was captured of one server.
type debugServer struct {
	Name, HTTPAddr string
	Files          []string
	// Errors are the files not captured, and why.
	Errors map[string]string `json:",omitempty"`
}

// debugArchive writes the archive's files as they are captured.
type debugArchive struct {
	tw  *tar.Writer
	now time.Time
}

func (d *debugArchive) add(name string, data []byte) error {
	hdr := &tar.Header{Name: name, Mode: 0o600, Size: int64(len(data)), ModTime: d.now, Typeflag: tar.TypeReg}
	if err := d.tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("archive %s: %w", name, err)
	}
	if _, err := d.tw.Write(data); err != nil {
		return fmt.Errorf("archive %s: %w", name, err)
	}
	return nil
}

func (d *debugArchive) addJSON(name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return d.add(name, append(b, '\n'))
}

// captureDebug writes the archive into dir and returns its path and
// manifest. A server or file that cannot be captured is recorded in the
// manifest, not fatal: a debug capture is most wanted when part of the
// cluster is broken. Failing to find any server, or to write, is.
func captureDebug(c *api.Client, dir string, cpu time.Duration, now time.Time) (string, *debugManifest, error) {
	members, err := c.Agent().Members()
	if err != nil {
		return "", nil, fmt.Errorf("listing the gossip members: %w", err)
	}
	var servers []*api.AgentMember
	for _, m := range members.Members {
		if m.Role == "server" && m.HTTPAddr != "" {
			servers = append(servers, m)
		}
	}
	if len(servers) == 0 {
		return "", nil, fmt.Errorf("the agent at %s knows no server with an HTTP address", c.Address())
	}
	sort.Slice(servers, func(i, j int) bool { return servers[i].Name < servers[j].Name })
	path := filepath.Join(dir, "stratus-debug-"+now.Format("20060102-150405")+".tar.gz")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", nil, err
	}
	gz := gzip.NewWriter(f)
	arch := &debugArchive{tw: tar.NewWriter(gz), now: now}
	man := &debugManifest{Archive: path, CapturedAt: now, Agent: c.Address(), Errors: map[string]string{}}
	err = captureAll(c, arch, man, members, servers, cpu)
	if err == nil {
		err = arch.addJSON("manifest.json", man)
	}
	for _, closer := range []io.Closer{arch.tw, gz, f} {
		if cerr := closer.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		_ = os.Remove(path)
		return "", nil, err
	}
	return path, man, nil
}

// captureAll adds the cluster's files, then each server's.
func captureAll(c *api.Client, arch *debugArchive, man *debugManifest, members *api.MembersResponse, servers []*api.AgentMember, cpu time.Duration) error {
	if err := arch.addJSON("cluster/members.json", members); err != nil {
		return err
	}
	man.Cluster = append(man.Cluster, "cluster/members.json")
	if cfg, err := c.Operator().RaftGetConfiguration(&api.QueryOptions{AllowStale: true}); err != nil {
		man.Errors["cluster/raft-configuration.json"] = err.Error()
	} else {
		if err := arch.addJSON("cluster/raft-configuration.json", cfg); err != nil {
			return err
		}
		man.Cluster = append(man.Cluster, "cluster/raft-configuration.json")
	}
	for _, m := range servers {
		s, err := captureServer(c, arch, m, cpu)
		if err != nil {
			return err
		}
		man.Servers = append(man.Servers, s)
	}
	return nil
}

// captureServer adds one server's files; only a failure to write the
// archive is an error.
func captureServer(c *api.Client, arch *debugArchive, m *api.AgentMember, cpu time.Duration) (*debugServer, error) {
	s := &debugServer{Name: m.Name, HTTPAddr: m.HTTPAddr, Errors: map[string]string{}}
	prefix := "servers/" + safeName(m.Name) + "/"
	sc, err := c.ForAgent(m.HTTPAddr)
	if err != nil {
		s.Errors[prefix] = err.Error()
		return s, nil
	}
	add := func(name string, get func() ([]byte, error)) error {
		data, err := get()
		if err != nil {
			s.Errors[prefix+name] = err.Error()
			return nil
		}
		s.Files = append(s.Files, prefix+name)
		return arch.add(prefix+name, data)
	}
	asJSON := func(get func() (any, error)) func() ([]byte, error) {
		return func() ([]byte, error) {
			v, err := get()
			if err != nil {
				return nil, err
			}
			b, err := json.MarshalIndent(v, "", "  ")
			return append(b, '\n'), err
		}
	}
	steps := []struct {
		name string
		get  func() ([]byte, error)
	}{
		{"self.json", asJSON(func() (any, error) { return sc.Agent().Self() })},
		{"members.json", asJSON(func() (any, error) { return sc.Agent().Members() })},
		{"metrics.prom", func() ([]byte, error) { return readAll(sc.Agent().Metrics()) }},
		{"logs.txt", func() ([]byte, error) { return readAll(sc.Agent().Logs()) }},
	}
	for _, st := range steps {
		if err := add(st.name, st.get); err != nil {
			return nil, err
		}
	}
	for _, p := range debugProfiles {
		secs := time.Duration(0)
		if p == "profile" {
			secs = cpu
		}
		if err := add("pprof/"+p+".prof", func() ([]byte, error) { return readAll(sc.Agent().Pprof(p, secs)) }); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// readAll reads and closes a stream an API call answered.
func readAll(rc io.ReadCloser, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// safeName keeps a member's name from escaping its directory in the
// archive.
func safeName(name string) string {
	name = strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r < ' ' {
			return '_'
		}
		return r
	}, name)
	if name == "" || name == "." || name == ".." {
		return "_"
	}
	return name
}
