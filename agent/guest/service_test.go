package guest

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestAdminUser picks the guest user as Nova's libvirt driver does.
func TestAdminUser(t *testing.T) {
	cases := []struct {
		props map[string]string
		want  string
	}{
		{nil, "root"},
		{map[string]string{"os_type": "linux"}, "root"},
		{map[string]string{"os_type": "Windows"}, "Administrator"},
		{map[string]string{"os_admin_user": "cloud"}, "cloud"},
		{map[string]string{"os_type": "windows", "os_admin_user": "admin"}, "admin"},
	}
	for _, c := range cases {
		if got := AdminUser(c.props); got != c.want {
			t.Errorf("AdminUser(%v) = %q, want %q", c.props, got, c.want)
		}
	}
}

// TestErrorTypes: the native API's statuses of the service's errors.
func TestErrorTypes(t *testing.T) {
	for err, want := range map[error]string{
		notSupported("x"):                         TypeNotSupported,
		notReady("x"):                             TypeNotReady,
		hostUnavailable("x"):                      TypeHostUnavailable,
		structs.Errorf(structs.KindNotFound, "x"): "",
	} {
		if got := ErrorType(err); got != want {
			t.Errorf("ErrorType(%v) = %q, want %q", err, got, want)
		}
	}
}
