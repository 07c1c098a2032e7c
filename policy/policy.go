package policy

import (
	"fmt"
	"slices"
	"strings"
)

// Access is the least a caller needs to use a route.
type Access int

const (
	// Unset is the zero value: a route that forgot its level admits no
	// one, rather than everyone.
	Unset Access = iota
	// Public routes need no credential at all: health, version
	// discovery, the one-time bootstrap.
	Public
	// Authenticated admits any verified credential, scoped to a project
	// or not: Keystone's own routes (an unscoped token lists its
	// projects), an S3 request's signature, a guest found by its address
	// on the metadata service.
	Authenticated
	// Anyone admits any valid project-scoped token (Nova's "@" rules).
	Anyone
	// Reader admits the project's readers, members and admins.
	Reader
	// Member admits the project's members and admins.
	Member
	// Admin admits cloud administrators only.
	Admin
)

var accessNames = map[Access]string{Unset: "unset (no one)", Public: "public", Authenticated: "authenticated", Anyone: "any token", Reader: "reader", Member: "member", Admin: "admin"}

// String names the level as the policy tables in the docs do.
func (a Access) String() string {
	if n, ok := accessNames[a]; ok {
		return n
	}
	return fmt.Sprintf("Access(%d)", int(a))
}

// Subject is a verified caller: whose token it is, the project it is
// scoped to and the role names it carries.
type Subject struct {
	UserID    string
	ProjectID string
	Roles     []string
}

// HasRole reports whether the subject carries the role of that name,
// ignoring case as oslo.policy's role checks do.
func (s *Subject) HasRole(name string) bool {
	return s != nil && slices.ContainsFunc(s.Roles, func(r string) bool { return strings.EqualFold(r, name) })
}

// IsAdmin reports whether the subject is a cloud administrator, as
// Keystone's and Nova's default context_is_admin: the admin role.
func (s *Subject) IsAdmin() bool { return s.HasRole("admin") }

// IsMember reports whether the subject may change its project's
// objects. Keystone's default roles imply one another (admin → member
// → reader) but tokens may carry only the highest, so each is checked.
func (s *Subject) IsMember() bool {
	return s.IsAdmin() || s.HasRole("member") || s.HasRole("_member_")
}

// IsReader reports whether the subject may read its project's objects.
func (s *Subject) IsReader() bool { return s.IsMember() || s.HasRole("reader") }

// Allows reports whether the subject reaches the level. Every level
// above Public needs a subject scoped to a project.
func (a Access) Allows(s *Subject) bool {
	if a == Public {
		return true
	}
	if a == Authenticated {
		return s != nil
	}
	if s == nil || s.ProjectID == "" {
		return false
	}
	switch a {
	case Anyone:
		return true
	case Reader:
		return s.IsReader()
	case Member:
		return s.IsMember()
	case Admin:
		return s.IsAdmin()
	}
	return false
}
