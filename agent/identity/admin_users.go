package identity

import (
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

// userBody is a user in a create or update request.
type userBody struct {
	Name             opt[string]         `json:"name"`
	Password         opt[string]         `json:"password"`
	DomainID         opt[string]         `json:"domain_id"`
	DefaultProjectID opt[string]         `json:"default_project_id"`
	Enabled          opt[bool]           `json:"enabled"`
	Description      opt[string]         `json:"description"`
	Email            opt[string]         `json:"email"`
	Options          opt[map[string]any] `json:"options"`
}

// applyTo validates the body and sets its fields (not the password) on u.
func (b *userBody) applyTo(u *structs.User) error {
	if b.Name.Set {
		u.Name = b.Name.V
	}
	if b.Enabled.Set {
		u.Enabled = b.Enabled.V
	}
	if b.DomainID.Set && !b.DomainID.Null && b.DomainID.V != u.DomainID {
		return errNotFound("domain", b.DomainID.V)
	}
	for _, f := range []struct {
		o   *opt[string]
		dst *string
	}{{&b.DefaultProjectID, &u.DefaultProjectID}, {&b.Description, &u.Description}, {&b.Email, &u.Email}} {
		if f.o.Set {
			*f.dst = f.o.V
		}
	}
	return nil
}

func (s *Service) userList(w http.ResponseWriter, r *http.Request) (int, any, error) {
	enabled, inDomain, err := listFilter(r)
	if err != nil {
		return 0, nil, err
	}
	resp, err := s.list(r, &structs.IdentityListRequest{Kind: structs.IdentityKindUsers, Name: r.URL.Query().Get("name")})
	if err != nil {
		return 0, nil, err
	}
	users := make([]userView, 0, len(resp.Users))
	for _, u := range resp.Users {
		if inDomain && (enabled == nil || u.Enabled == *enabled) {
			users = append(users, s.userView(r, u))
		}
	}
	return http.StatusOK, map[string]any{"users": users, "links": s.listLinks(r)}, nil
}

func (s *Service) userCreate(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var body struct {
		User *userBody `json:"user"`
	}
	if err := decodeJSON(w, r, &body); err != nil {
		return 0, nil, err
	}
	if body.User == nil || !body.User.Name.Set || body.User.Name.Null {
		return 0, nil, errBadRequest("'name' is a required property.")
	}
	u := &structs.User{DomainID: structs.DefaultDomainID, Enabled: true}
	if err := body.User.applyTo(u); err != nil {
		return 0, nil, err
	}
	req := &structs.IdentityUpsertRequest{Users: []*structs.User{u}}
	if body.User.Password.Set && !body.User.Password.Null {
		req.Passwords = map[string]string{u.Name: body.User.Password.V}
	}
	resp, err := s.upsert(r, req, "user", u.Name)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, map[string]any{"user": s.userView(r, resp.Users[0])}, nil
}

func (s *Service) userGet(w http.ResponseWriter, r *http.Request) (int, any, error) {
	t, err := s.authenticated(r)
	if err != nil {
		return 0, nil, err
	}
	id := r.PathValue("id")
	if t.UserID != id && !t.IsAdmin() {
		return 0, nil, errForbidden("get_user")
	}
	u, err := s.getUser(r, id)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"user": s.userView(r, u)}, nil
}

func (s *Service) userUpdate(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var body struct {
		User *userBody `json:"user"`
	}
	if err := decodeJSON(w, r, &body); err != nil {
		return 0, nil, err
	}
	if body.User == nil {
		return 0, nil, errBadRequest("Expecting to find user in the request body.")
	}
	if body.User.Password.Null {
		return 0, nil, errBadRequest("Removing a user's password is not supported.")
	}
	u, err := s.getUser(r, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	if err := body.User.applyTo(u); err != nil {
		return 0, nil, err
	}
	req := &structs.IdentityUpsertRequest{Users: []*structs.User{u}}
	if body.User.Password.Set {
		req.Passwords = map[string]string{u.ID: body.User.Password.V}
	}
	resp, err := s.upsert(r, req, "user", u.Name)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"user": s.userView(r, resp.Users[0])}, nil
}

func (s *Service) userDelete(w http.ResponseWriter, r *http.Request) (int, any, error) {
	id := r.PathValue("id")
	if err := s.remove(r, &structs.IdentityDeleteRequest{UserIDs: []string{id}}, "user", id); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// userPassword answers POST /v3/users/{id}/password: a user changes its
// own password, proving the old one. Its tokens are revoked.
func (s *Service) userPassword(w http.ResponseWriter, r *http.Request) (int, any, error) {
	t, err := s.authenticated(r)
	if err != nil {
		return 0, nil, err
	}
	id := r.PathValue("id")
	if t.UserID != id {
		return 0, nil, errForbidden("change_password")
	}
	var body struct {
		User *struct {
			Password         string `json:"password"`
			OriginalPassword string `json:"original_password"`
		} `json:"user"`
	}
	if err := decodeJSON(w, r, &body); err != nil {
		return 0, nil, err
	}
	if body.User == nil || body.User.Password == "" {
		return 0, nil, errBadRequest("'password' is a required property.")
	}
	var auth structs.IdentityAuthResponse
	if err := s.call("Identity.Authenticate", &structs.IdentityAuthRequest{Method: "password", UserID: id,
		Password: body.User.OriginalPassword}, &auth); err != nil {
		return 0, nil, err
	}
	u := auth.User
	if _, err := s.upsert(r, &structs.IdentityUpsertRequest{Users: []*structs.User{u},
		Passwords: map[string]string{u.ID: body.User.Password}}, "user", u.Name); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// userProjects answers GET /v3/users/{id}/projects.
func (s *Service) userProjects(w http.ResponseWriter, r *http.Request) (int, any, error) {
	t, err := s.authenticated(r)
	if err != nil {
		return 0, nil, err
	}
	id := r.PathValue("id")
	if t.UserID != id && !t.IsAdmin() {
		return 0, nil, errForbidden("list_user_projects")
	}
	if _, err := s.getUser(r, id); err != nil {
		return 0, nil, err
	}
	return s.projectsOf(r, id, false)
}
