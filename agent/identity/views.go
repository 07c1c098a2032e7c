package identity

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

// Keystone's JSON documents.

type selfLink struct {
	Self string `json:"self"`
}

// listLinks are a collection's links; Stratus does not paginate.
type listLinks struct {
	Self     string  `json:"self"`
	Previous *string `json:"previous"`
	Next     *string `json:"next"`
}

func (s *Service) listLinks(r *http.Request) listLinks {
	self := s.base(r) + r.URL.Path
	if r.URL.RawQuery != "" {
		self += "?" + r.URL.RawQuery
	}
	return listLinks{Self: self}
}

type idName struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// domainRef is the domain of a token's user or project.
func domainRef(id string) idName {
	name := id
	if id == structs.DefaultDomainID {
		name = structs.DefaultDomainName
	}
	return idName{ID: id, Name: name}
}

type projectView struct {
	ID          string         `json:"id"`
	Name        string         `json:"name"`
	DomainID    string         `json:"domain_id"`
	Description string         `json:"description"`
	Enabled     bool           `json:"enabled"`
	IsDomain    bool           `json:"is_domain"`
	ParentID    string         `json:"parent_id"`
	Tags        []string       `json:"tags"`
	Options     map[string]any `json:"options"`
	Links       selfLink       `json:"links"`
}

func (s *Service) projectView(r *http.Request, p *structs.Project) projectView {
	return projectView{ID: p.ID, Name: p.Name, DomainID: p.DomainID, Description: p.Description,
		Enabled: p.Enabled, ParentID: p.DomainID, Tags: []string{}, Options: map[string]any{},
		Links: selfLink{Self: s.base(r) + "/identity/v3/projects/" + p.ID}}
}

func (s *Service) projectViews(r *http.Request, ps []*structs.Project) []projectView {
	out := make([]projectView, 0, len(ps))
	for _, p := range ps {
		out = append(out, s.projectView(r, p))
	}
	return out
}

type userView struct {
	ID                string         `json:"id"`
	Name              string         `json:"name"`
	DomainID          string         `json:"domain_id"`
	Enabled           bool           `json:"enabled"`
	DefaultProjectID  string         `json:"default_project_id,omitempty"`
	Description       string         `json:"description,omitempty"`
	Email             string         `json:"email,omitempty"`
	PasswordExpiresAt *string        `json:"password_expires_at"`
	Options           map[string]any `json:"options"`
	Links             selfLink       `json:"links"`
}

func (s *Service) userView(r *http.Request, u *structs.User) userView {
	return userView{ID: u.ID, Name: u.Name, DomainID: u.DomainID, Enabled: u.Enabled,
		DefaultProjectID: u.DefaultProjectID, Description: u.Description, Email: u.Email,
		Options: map[string]any{}, Links: selfLink{Self: s.base(r) + "/identity/v3/users/" + u.ID}}
}

type roleView struct {
	ID          string         `json:"id"`
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	DomainID    *string        `json:"domain_id"`
	Options     map[string]any `json:"options"`
	Links       selfLink       `json:"links"`
}

func (s *Service) roleView(r *http.Request, role *structs.Role) roleView {
	return roleView{ID: role.ID, Name: role.Name, Description: role.Description, Options: map[string]any{},
		Links: selfLink{Self: s.base(r) + "/identity/v3/roles/" + role.ID}}
}

func (s *Service) roleViews(r *http.Request, roles []*structs.Role) []roleView {
	out := make([]roleView, 0, len(roles))
	for _, role := range roles {
		out = append(out, s.roleView(r, role))
	}
	return out
}

// tokenView is the "token" document of POST and GET /v3/auth/tokens.
type tokenView struct {
	Methods   []string       `json:"methods"`
	User      tokenUser      `json:"user"`
	Project   *tokenProject  `json:"project,omitempty"`
	Roles     []idName       `json:"roles,omitempty"`
	Catalog   []catalogEntry `json:"catalog,omitempty"`
	IsDomain  *bool          `json:"is_domain,omitempty"`
	ExpiresAt string         `json:"expires_at"`
	IssuedAt  string         `json:"issued_at"`
	AuditIDs  []string       `json:"audit_ids"`
	// AppCred is the application credential of a token issued for one.
	AppCred *tokenAppCred `json:"application_credential,omitempty"`
}

type tokenAppCred struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Restricted bool   `json:"restricted"`
}

type tokenUser struct {
	ID                string  `json:"id"`
	Name              string  `json:"name"`
	Domain            idName  `json:"domain"`
	PasswordExpiresAt *string `json:"password_expires_at"`
}

type tokenProject struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Domain idName `json:"domain"`
}

// tokenView renders a token; the catalog is included for a scoped token
// unless withCatalog is false.
func (s *Service) tokenView(r *http.Request, t *Token, withCatalog bool) map[string]tokenView {
	v := tokenView{
		Methods:   t.Methods,
		User:      tokenUser{ID: t.UserID, Name: t.UserName, Domain: domainRef(t.DomainID)},
		ExpiresAt: keystoneTime(t.ExpiresAt),
		IssuedAt:  keystoneTime(t.IssuedAt),
		AuditIDs:  []string{t.AuditID},
	}
	if t.AppCredID != "" {
		v.AppCred = &tokenAppCred{ID: t.AppCredID, Name: t.AppCredName, Restricted: t.AppCredRestricted}
	}
	if t.ParentAuditID != "" {
		v.AuditIDs = append(v.AuditIDs, t.ParentAuditID)
	}
	if t.IsScoped() {
		isDomain := false
		v.IsDomain = &isDomain
		v.Project = &tokenProject{ID: t.ProjectID, Name: t.ProjectName, Domain: domainRef(t.ProjectDomainID)}
		v.Roles = make([]idName, 0, len(t.Roles))
		for i, name := range t.Roles {
			v.Roles = append(v.Roles, idName{ID: t.RoleIDs[i], Name: name})
		}
		if withCatalog {
			v.Catalog = s.catalog(r)
		}
	}
	return map[string]tokenView{"token": v}
}

type catalogEntry struct {
	ID        string     `json:"id"`
	Type      string     `json:"type"`
	Name      string     `json:"name"`
	Endpoints []endpoint `json:"endpoints"`
}

type endpoint struct {
	ID        string `json:"id"`
	Interface string `json:"interface"`
	Region    string `json:"region"`
	RegionID  string `json:"region_id"`
	URL       string `json:"url"`
}

// stableID derives a Keystone-looking id that is the same on every agent.
func stableID(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p + "\x00"))
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// opt is an optional JSON field of an update: Set when present, Null when
// present as null.
type opt[T any] struct {
	Set  bool
	Null bool
	V    T
}

// UnmarshalJSON records that the field was present.
func (o *opt[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" {
		o.Null = true
		return nil
	}
	return json.Unmarshal(b, &o.V)
}
