package agent

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/stratus-cloud/stratus/policy"
	"github.com/stratus-cloud/stratus/structs"
)

// devReadiness tracks dev mode's seeding: the cloud is ready for a user
// once every step is done, not merely once a leader is elected (flavors
// come after the image, so `cloudctl flavor list` right after the
// leader's election could be empty). It is the native API's Readiness.
type devReadiness struct {
	mu      sync.Mutex
	pending map[string]bool
	ready   chan struct{}
}

func newDevReadiness(steps ...string) *devReadiness {
	d := &devReadiness{pending: map[string]bool{}, ready: make(chan struct{})}
	for _, s := range steps {
		d.pending[s] = true
	}
	return d
}

// done marks a step done and reports whether it was the last one.
func (d *devReadiness) done(step string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.pending[step] {
		return false
	}
	delete(d.pending, step)
	if len(d.pending) > 0 {
		return false
	}
	close(d.ready)
	return true
}

// Ready is closed once every step is done.
func (d *devReadiness) Ready() <-chan struct{} { return d.ready }

// NotReady names the steps still pending.
func (d *devReadiness) NotReady() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	steps := make([]string, 0, len(d.pending))
	for s := range d.pending {
		steps = append(steps, s)
	}
	sort.Strings(steps)
	return "dev mode is still seeding " + strings.Join(steps, ", ")
}

// startDevSeeding seeds a dev cloud: each step retried until it
// succeeds, and one log line, with the next step to take, once all are.
func (a *Agent) startDevSeeding() {
	steps := []struct {
		name string
		run  func() error
	}{
		{"identity", a.seedDevIdentity},
		{"image", a.seedDevImage},
		{"flavors", a.seedDevFlavors},
		{"networks", a.seedDevNetworks},
	}
	for _, s := range steps {
		a.bgWG.Add(1)
		go a.seedDev(s.name, s.run)
	}
}

// seedDev runs one seeding step until it succeeds or the agent shuts
// down.
func (a *Agent) seedDev(name string, step func() error) {
	defer a.bgWG.Done()
	for {
		err := step()
		if err == nil {
			if a.devReady.done(name) {
				a.logger.Info(fmt.Sprintf("dev cloud ready; next: export CLOUDCTL_ADDR=%s; cloudctl instance create -image cirros -flavor m1.tiny vm1", a.HTTPURL()))
			}
			return
		}
		a.logger.Debug("dev mode: waiting to seed "+name, "error", err)
		select {
		case <-a.shutdownCh:
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// devOwnerName is the user, and the project, that a dev cloud's
// anonymous requests act as: devstack's admin, as Nomad's dev agent
// treats anonymous calls as management.
const devOwnerName = "admin"

// learnDevOwner looks up the dev admin user and project.
func (a *Agent) learnDevOwner() error {
	subj := &policy.Subject{Roles: []string{"admin", "member", "reader"}}
	var users, projects structs.IdentityListResponse
	if err := a.self.RPC("Identity.List", &structs.IdentityListRequest{Kind: structs.IdentityKindUsers}, &users); err != nil {
		return err
	}
	if err := a.self.RPC("Identity.List", &structs.IdentityListRequest{Kind: structs.IdentityKindProjects}, &projects); err != nil {
		return err
	}
	for _, u := range users.Users {
		if u.Name == devOwnerName && u.DomainID == structs.DefaultDomainID {
			subj.UserID = u.ID
		}
	}
	for _, p := range projects.Projects {
		if p.Name == devOwnerName && p.DomainID == structs.DefaultDomainID {
			subj.ProjectID = p.ID
		}
	}
	if subj.UserID == "" || subj.ProjectID == "" {
		return fmt.Errorf("the dev user and project %q are not there yet", devOwnerName)
	}
	if a.devOwner.CompareAndSwap(nil, subj) {
		close(a.devOwnerKnown)
	}
	return nil
}

// devOwnerWait is how long a request without a token waits for a fresh
// dev cloud's admin to be seeded, as a request waits for a leader.
const devOwnerWait = 10 * time.Second

// devAnonymous is who a dev cloud's request without a token acts as. A
// request that comes before the seeding waits for it a while.
func (a *Agent) devAnonymous() (*policy.Subject, error) {
	if s := a.devOwner.Load(); s != nil {
		return s, nil
	}
	t := time.NewTimer(devOwnerWait)
	defer t.Stop()
	select {
	case <-a.devOwnerKnown:
		return a.devOwner.Load(), nil
	case <-a.shutdownCh:
	case <-t.C:
	}
	return nil, structs.Errorf(structs.KindUnavailable, "the dev cloud is still starting: its admin user and project are not seeded yet")
}

// devSettleWait bounds how long a dev cloud's API request waits for the
// seeding: a request sent the moment `make dev` starts (a flavor looked
// up by name, a token for the demo user) gets the seeded cloud, not a
// 404 a second before the flavors exist.
const devSettleWait = 10 * time.Second

// devSettled holds a dev cloud's API requests until its seeding is done
// (at most devSettleWait; after that the request runs and gets the
// APIs' own answer). Readiness, health and the UI answer at once: they
// are how a caller learns the cloud is not ready yet.
func (a *Agent) devSettled(h http.Handler) http.Handler {
	if a.devReady == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !devSettleExempt(r.URL.Path) {
			a.waitDevReady(r)
		}
		h.ServeHTTP(w, r)
	})
}

// waitDevReady waits for the seeding, the request's end or
// devSettleWait, whichever comes first.
func (a *Agent) waitDevReady(r *http.Request) {
	select {
	case <-a.devReady.Ready():
		return
	default:
	}
	t := time.NewTimer(devSettleWait)
	defer t.Stop()
	select {
	case <-a.devReady.Ready():
	case <-r.Context().Done():
	case <-a.shutdownCh:
	case <-t.C:
	}
}

// devSettleExempt names the paths that answer before the seeding.
func devSettleExempt(path string) bool {
	for _, p := range []string{"/v1/status/", "/v1/agent/", "/ui"} {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return path == "/"
}
