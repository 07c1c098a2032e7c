package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Environment variables of OpenStack's clients that DefaultConfig reads
// when no Stratus token is set: a token, or a user to log in as.
const (
	EnvOSToken         = "OS_TOKEN"
	EnvOSUsername      = "OS_USERNAME"
	EnvOSPassword      = "OS_PASSWORD"
	EnvOSProjectName   = "OS_PROJECT_NAME"
	EnvOSUserDomain    = "OS_USER_DOMAIN_NAME"
	EnvOSProjectDomain = "OS_PROJECT_DOMAIN_NAME"
)

// KindUnauthenticated is the kind of a 401: no token, or one the agent
// does not accept.
const KindUnauthenticated = "unauthenticated"

// Credentials are a user's password credentials, scoped to a project.
type Credentials struct {
	User     string
	Password string
	// Project is the project's name; empty means the user's project of
	// the same name.
	Project string
	// Domain is the user's and project's domain name (default "Default").
	Domain string
}

// Login is a token the identity service issued.
type Login struct {
	Token       string
	ExpiresAt   time.Time
	UserID      string
	UserName    string
	ProjectID   string
	ProjectName string
	Roles       []string
}

// Login asks the agent's identity service (Keystone v3 password
// authentication) for a project-scoped token. It does not change the
// client's own token; SetToken does.
func (c *Client) Login(cred Credentials) (*Login, error) {
	domain := cred.Domain
	if domain == "" {
		domain = "Default"
	}
	project := cred.Project
	if project == "" {
		project = cred.User
	}
	if cred.User == "" || cred.Password == "" {
		return nil, errors.New("login needs a user name and a password")
	}
	body := map[string]any{"auth": map[string]any{
		"identity": map[string]any{"methods": []string{"password"}, "password": map[string]any{
			"user": map[string]any{"name": cred.User, "domain": map[string]any{"name": domain}, "password": cred.Password}}},
		"scope": map[string]any{"project": map[string]any{"name": project, "domain": map[string]any{"name": domain}}},
	}}
	var out struct {
		Token struct {
			ExpiresAt time.Time `json:"expires_at"`
			User      struct{ ID, Name string }
			Project   struct{ ID, Name string }
			Roles     []struct{ Name string }
		} `json:"token"`
	}
	h, err := c.identityJSON(http.MethodPost, "/identity/v3/auth/tokens", nil, body, &out)
	if err != nil {
		return nil, err
	}
	l := &Login{Token: h.Get("X-Subject-Token"), ExpiresAt: out.Token.ExpiresAt,
		UserID: out.Token.User.ID, UserName: out.Token.User.Name,
		ProjectID: out.Token.Project.ID, ProjectName: out.Token.Project.Name}
	for _, r := range out.Token.Roles {
		l.Roles = append(l.Roles, r.Name)
	}
	if l.Token == "" {
		return nil, errors.New("the identity service answered without a token")
	}
	return l, nil
}

// Logout revokes a token.
func (c *Client) Logout(token string) error {
	_, err := c.identityJSON(http.MethodDelete, "/identity/v3/auth/tokens",
		map[string]string{"X-Auth-Token": token, "X-Subject-Token": token}, nil, nil)
	return err
}

// SetToken makes the client send token from now on.
func (c *Client) SetToken(token string) {
	c.mu.Lock()
	c.token = token
	c.mu.Unlock()
}

// identityJSON calls the Keystone-compatible API, whose error bodies
// ({"error": {"code", "title", "message"}}) become *Error as well.
func (c *Client) identityJSON(method, path string, headers map[string]string, in, out any) (http.Header, error) {
	var body io.Reader
	if in != nil {
		buf, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = strings.NewReader(string(buf))
	}
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, connError(c.base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		var ks struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		e := &Error{StatusCode: resp.StatusCode, Message: strings.TrimSpace(string(raw))}
		if json.Unmarshal(raw, &ks) == nil && ks.Error.Message != "" {
			e.Message = ks.Error.Message
		}
		if resp.StatusCode == http.StatusUnauthorized {
			e.Kind = KindUnauthenticated
		}
		return nil, e
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return nil, fmt.Errorf("decoding %s %s: %w", method, path, err)
		}
	}
	return resp.Header, nil
}

// SavedToken is what `cloudctl login` keeps on disk: a token and the
// agent it is for, so it is never sent to another cloud.
type SavedToken struct {
	Address   string
	Token     string
	ExpiresAt time.Time
	User      string
	Project   string
}

// TokenFile is where `cloudctl login` saves its token:
// $XDG_CONFIG_HOME/cloudctl/token, else ~/.config/cloudctl/token.
func TokenFile() (string, error) {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("token file: %w", err)
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "cloudctl", "token"), nil
}

// SaveToken writes t to the token file, readable by its owner only.
func SaveToken(t *SavedToken) (string, error) {
	path, err := TokenFile()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("save token: %w", err)
	}
	buf, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return "", err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf, 0o600); err != nil {
		return "", fmt.Errorf("save token: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("save token: %w", err)
	}
	return path, nil
}

// LoadToken reads the saved token for address; nil when there is none,
// it is for another agent, or it has expired.
func LoadToken(address string) *SavedToken {
	path, err := TokenFile()
	if err != nil {
		return nil
	}
	buf, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var t SavedToken
	if json.Unmarshal(buf, &t) != nil || t.Token == "" {
		return nil
	}
	if strings.TrimRight(t.Address, "/") != strings.TrimRight(address, "/") {
		return nil
	}
	if !t.ExpiresAt.IsZero() && !time.Now().Before(t.ExpiresAt) {
		return nil
	}
	return &t
}

// RemoveToken deletes the token file; a missing file is not an error.
func RemoveToken() error {
	path, err := TokenFile()
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// credentialsFromEnv returns the OS_* password credentials, if set.
func credentialsFromEnv() *Credentials {
	user, pass := os.Getenv(EnvOSUsername), os.Getenv(EnvOSPassword)
	if user == "" || pass == "" {
		return nil
	}
	domain := os.Getenv(EnvOSUserDomain)
	if domain == "" {
		domain = os.Getenv(EnvOSProjectDomain)
	}
	return &Credentials{User: user, Password: pass, Project: os.Getenv(EnvOSProjectName), Domain: domain}
}

// ensureToken logs in with the configured credentials when the client
// has none yet; it runs once per client (a failed login is retried on
// the next request).
func (c *Client) ensureToken() (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token != "" || c.cred == nil {
		return c.token, nil
	}
	l, err := c.Login(*c.cred)
	if err != nil {
		return "", fmt.Errorf("log in as %s: %w", c.cred.User, err)
	}
	c.token = l.Token
	return c.token, nil
}
