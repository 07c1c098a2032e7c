package policy

import "testing"

func TestAllows(t *testing.T) {
	admin := &Subject{UserID: "u1", ProjectID: "p1", Roles: []string{"Admin"}}
	member := &Subject{UserID: "u2", ProjectID: "p2", Roles: []string{"member"}}
	legacy := &Subject{UserID: "u2", ProjectID: "p2", Roles: []string{"_member_"}}
	reader := &Subject{UserID: "u3", ProjectID: "p3", Roles: []string{"reader"}}
	none := &Subject{UserID: "u4", ProjectID: "p4"}
	unscoped := &Subject{UserID: "u5", Roles: []string{"admin"}}
	cases := []struct {
		level Access
		who   *Subject
		want  bool
	}{
		{Unset, admin, false},
		{Unset, nil, false},
		{Public, nil, true},
		{Anyone, nil, false},
		{Authenticated, nil, false},
		{Authenticated, unscoped, true},
		{Authenticated, none, true},
		{Anyone, none, true},
		{Anyone, unscoped, false},
		{Reader, reader, true},
		{Reader, none, false},
		{Reader, member, true},
		{Member, reader, false},
		{Member, member, true},
		{Member, legacy, true},
		{Member, admin, true},
		{Admin, member, false},
		{Admin, admin, true},
		{Admin, unscoped, false},
		{Access(99), admin, false},
	}
	for _, c := range cases {
		if got := c.level.Allows(c.who); got != c.want {
			t.Errorf("%v.Allows(%+v) = %v, want %v", c.level, c.who, got, c.want)
		}
	}
}

func TestString(t *testing.T) {
	for a, want := range map[Access]string{Public: "public", Admin: "admin", Access(42): "Access(42)"} {
		if got := a.String(); got != want {
			t.Errorf("%d: %q, want %q", int(a), got, want)
		}
	}
}
