package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// microversion is the Compute API microversion the clients speak: 2.37
// allows "networks": "none".
const microversion = "compute 2.37"

// apiError is an answer with an unexpected status.
type apiError struct {
	Status int
	Body   string
}

func (e *apiError) Error() string { return fmt.Sprintf("status %d: %.200s", e.Status, e.Body) }

// call makes one JSON request and decodes the answer into out (when not
// nil); any status but want is an *apiError.
func call(ctx context.Context, hc *http.Client, method, url, token string, in, out any, want int) (http.Header, error) {
	return callWith(ctx, hc, method, url, token, nil, in, out, want)
}

// callWith is call with extra request headers.
func callWith(ctx context.Context, hc *http.Client, method, url, token string, extra http.Header, in, out any, want int) (http.Header, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	req.Header.Set("OpenStack-API-Version", microversion)
	for k, v := range extra {
		req.Header[k] = v
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		return resp.Header, &apiError{Status: resp.StatusCode, Body: string(data)}
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.Header, fmt.Errorf("decode %s %s: %w", method, url, err)
		}
	}
	return resp.Header, nil
}

// retry runs fn until it succeeds or timeout passes.
func retry(timeout time.Duration, fn func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := fn()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// token issues a project-scoped Keystone token.
func token(ctx context.Context, hc *http.Client, base, user, password, project string) (string, error) {
	body := map[string]any{"auth": map[string]any{
		"identity": map[string]any{"methods": []string{"password"}, "password": map[string]any{
			"user": map[string]any{"name": user, "domain": map[string]any{"id": "default"}, "password": password}}},
		"scope": map[string]any{"project": map[string]any{"name": project, "domain": map[string]any{"id": "default"}}},
	}}
	hdr, err := call(ctx, hc, "POST", base+"/identity/v3/auth/tokens", "", body, nil, http.StatusCreated)
	if err != nil {
		return "", fmt.Errorf("token for %s: %w", user, err)
	}
	return hdr.Get("X-Subject-Token"), nil
}

// bootstrapAdmin creates the cluster's first administrator through
// POST /v1/operator/bootstrap, as an operator does on a new production
// cluster, and logs in as it. A bootstrap whose answer was lost cannot be
// repeated (it happens once), so a lost answer is an error here.
func bootstrapAdmin(ctx context.Context, hc *http.Client, base string) (string, error) {
	var boot struct{ UserName, Password, ProjectName string }
	err := retry(120*time.Second, func() error {
		_, err := call(ctx, hc, "POST", base+"/v1/operator/bootstrap", "", map[string]any{}, &boot, http.StatusOK)
		var ae *apiError
		if errors.As(err, &ae) && ae.Status < 500 {
			return fmt.Errorf("the cluster was bootstrapped before: %w", err)
		}
		return err
	})
	if err != nil || boot.UserName == "" {
		return "", fmt.Errorf("bootstrap the first admin: %v", err)
	}
	var tok string
	err = retry(120*time.Second, func() error {
		tok, err = token(ctx, hc, base, boot.UserName, boot.Password, boot.ProjectName)
		return err
	})
	return tok, err
}

// introduce issues a node introduction as the admin and writes it
// where the client agents read it: with ACLs on, the servers register
// their new hosts only with one.
func introduce(ctx context.Context, hc *http.Client, base, admin, file string) error {
	var out struct{ Token string }
	err := retry(120*time.Second, func() error {
		_, err := call(ctx, hc, "POST", base+"/v1/operator/node-intro", admin, map[string]any{"TTL": "24h"}, &out, http.StatusOK)
		return err
	})
	if err != nil || out.Token == "" {
		return fmt.Errorf("issue a node introduction: %v", err)
	}
	return os.WriteFile(file, []byte(out.Token+"\n"), 0o600)
}

// Project is one tenant of the load: its token and what its clients use.
type Project struct {
	Name  string
	Token string
}

// Fixture is what the clients boot with.
type Fixture struct {
	Projects []*Project
	Admin    string // an admin token
	Flavor   string
	Image    string
}

// Prepare seeds identity, creates n projects with a member user each and
// issues their tokens, a flavor and a public image.
func Prepare(ctx context.Context, hc *http.Client, base string, n int, logf func(string, ...any)) (*Fixture, error) {
	f := &Fixture{}
	var err error
	if f.Admin, err = bootstrapAdmin(ctx, hc, base); err != nil {
		return nil, err
	}
	var roles struct {
		Roles []struct{ ID string } `json:"roles"`
	}
	if _, err := call(ctx, hc, "GET", base+"/identity/v3/roles?name=member", f.Admin, nil, &roles, 200); err != nil || len(roles.Roles) == 0 {
		return nil, fmt.Errorf("member role: %v", err)
	}
	for i := range n {
		p, err := makeProject(ctx, hc, base, f.Admin, roles.Roles[0].ID, fmt.Sprintf("load-%03d", i))
		if err != nil {
			return nil, err
		}
		f.Projects = append(f.Projects, p)
	}
	logf("%d projects with a member user and a token each", n)
	if err := f.makeFlavorAndImage(ctx, hc, base); err != nil {
		return nil, err
	}
	return f, nil
}

// makeProject creates a project and its user with the member role, and
// issues the user's token.
func makeProject(ctx context.Context, hc *http.Client, base, admin, roleID, name string) (*Project, error) {
	var pr struct {
		Project struct{ ID string } `json:"project"`
	}
	if _, err := call(ctx, hc, "POST", base+"/identity/v3/projects", admin,
		map[string]any{"project": map[string]any{"name": name, "domain_id": "default"}}, &pr, http.StatusCreated); err != nil {
		return nil, fmt.Errorf("project %s: %w", name, err)
	}
	var us struct {
		User struct{ ID string } `json:"user"`
	}
	if _, err := call(ctx, hc, "POST", base+"/identity/v3/users", admin,
		map[string]any{"user": map[string]any{"name": name, "password": name, "domain_id": "default", "default_project_id": pr.Project.ID}},
		&us, http.StatusCreated); err != nil {
		return nil, fmt.Errorf("user %s: %w", name, err)
	}
	if _, err := call(ctx, hc, "PUT", fmt.Sprintf("%s/identity/v3/projects/%s/users/%s/roles/%s", base, pr.Project.ID, us.User.ID, roleID),
		admin, nil, nil, http.StatusNoContent); err != nil {
		return nil, fmt.Errorf("grant %s: %w", name, err)
	}
	tok, err := token(ctx, hc, base, name, name, name)
	if err != nil {
		return nil, err
	}
	return &Project{Name: name, Token: tok}, nil
}

// makeFlavorAndImage creates flavor load.tiny and a public raw image.
func (f *Fixture) makeFlavorAndImage(ctx context.Context, hc *http.Client, base string) error {
	var fl struct {
		Flavor struct{ ID string } `json:"flavor"`
	}
	if _, err := call(ctx, hc, "POST", base+"/compute/v2.1/flavors", f.Admin,
		map[string]any{"flavor": map[string]any{"name": "load.tiny", "ram": 64, "vcpus": 1, "disk": 1}}, &fl, 200); err != nil {
		return fmt.Errorf("flavor: %w", err)
	}
	f.Flavor = fl.Flavor.ID
	var img struct {
		ID string `json:"id"`
	}
	if _, err := call(ctx, hc, "POST", base+"/image/v2/images", f.Admin,
		map[string]any{"name": "load-image", "disk_format": "raw", "container_format": "bare", "visibility": "public"}, &img, http.StatusCreated); err != nil {
		return fmt.Errorf("image: %w", err)
	}
	f.Image = img.ID
	req, err := http.NewRequestWithContext(ctx, "PUT", base+"/image/v2/images/"+img.ID+"/file", bytes.NewReader(make([]byte, 1<<20)))
	if err != nil {
		return err
	}
	req.Header.Set("X-Auth-Token", f.Admin)
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("image upload: %w", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("image upload: status %d", resp.StatusCode)
	}
	return nil
}
