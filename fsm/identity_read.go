package fsm

import (
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// Reads of the identity tables. Every object returned is shared with the
// store: callers must copy before changing one (users especially, whose
// PasswordHash answers must clear).

// ProjectByID returns a project or nil.
func (s *StateStore) ProjectByID(ws memdb.WatchSet, id string) (*structs.Project, error) {
	return first[*structs.Project](s.ReadTxn(), ws, TableProjects, "id", id)
}

// ProjectByName returns the project of that name in a domain, or nil.
func (s *StateStore) ProjectByName(ws memdb.WatchSet, domainID, name string) (*structs.Project, error) {
	return first[*structs.Project](s.ReadTxn(), ws, TableProjects, "name", name, domainID)
}

// Projects lists every project by id.
func (s *StateStore) Projects(ws memdb.WatchSet) ([]*structs.Project, error) {
	return list[*structs.Project](s.ReadTxn(), ws, TableProjects)
}

// UserByID returns a user or nil.
func (s *StateStore) UserByID(ws memdb.WatchSet, id string) (*structs.User, error) {
	return first[*structs.User](s.ReadTxn(), ws, TableUsers, "id", id)
}

// UserByName returns the user of that name in a domain, or nil.
func (s *StateStore) UserByName(ws memdb.WatchSet, domainID, name string) (*structs.User, error) {
	return first[*structs.User](s.ReadTxn(), ws, TableUsers, "name", name, domainID)
}

// Users lists every user by id.
func (s *StateStore) Users(ws memdb.WatchSet) ([]*structs.User, error) {
	return list[*structs.User](s.ReadTxn(), ws, TableUsers)
}

// RoleByID returns a role or nil.
func (s *StateStore) RoleByID(ws memdb.WatchSet, id string) (*structs.Role, error) {
	return first[*structs.Role](s.ReadTxn(), ws, TableRoles, "id", id)
}

// RoleByName returns the role of that name, or nil.
func (s *StateStore) RoleByName(ws memdb.WatchSet, name string) (*structs.Role, error) {
	return first[*structs.Role](s.ReadTxn(), ws, TableRoles, "name", name)
}

// Roles lists every role by id.
func (s *StateStore) Roles(ws memdb.WatchSet) ([]*structs.Role, error) {
	return list[*structs.Role](s.ReadTxn(), ws, TableRoles)
}

// Assignment returns one role assignment, or nil.
func (s *StateStore) Assignment(ws memdb.WatchSet, userID, projectID, roleID string) (*structs.RoleAssignment, error) {
	return first[*structs.RoleAssignment](s.ReadTxn(), ws, TableAssignments, "id", userID, projectID, roleID)
}

// Assignments lists role assignments, filtered by whichever of user,
// project and role are not empty.
func (s *StateStore) Assignments(ws memdb.WatchSet, userID, projectID, roleID string) ([]*structs.RoleAssignment, error) {
	txn := s.ReadTxn()
	var all []*structs.RoleAssignment
	var err error
	switch {
	case userID != "":
		all, err = list[*structs.RoleAssignment](txn, ws, TableAssignments, "user", userID)
	case projectID != "":
		all, err = list[*structs.RoleAssignment](txn, ws, TableAssignments, "project", projectID)
	case roleID != "":
		all, err = list[*structs.RoleAssignment](txn, ws, TableAssignments, "role", roleID)
	default:
		all, err = list[*structs.RoleAssignment](txn, ws, TableAssignments)
	}
	if err != nil {
		return nil, err
	}
	out := all[:0:0]
	for _, a := range all {
		if (userID == "" || a.UserID == userID) && (projectID == "" || a.ProjectID == projectID) && (roleID == "" || a.RoleID == roleID) {
			out = append(out, a)
		}
	}
	return out, nil
}

// SigningKeys lists every token signing key.
func (s *StateStore) SigningKeys(ws memdb.WatchSet) ([]*structs.SigningKey, error) {
	return list[*structs.SigningKey](s.ReadTxn(), ws, TableSigningKeys)
}

// RevokedTokens lists every revocation record.
func (s *StateStore) RevokedTokens(ws memdb.WatchSet) ([]*structs.RevokedToken, error) {
	return list[*structs.RevokedToken](s.ReadTxn(), ws, TableRevokedTokens)
}
