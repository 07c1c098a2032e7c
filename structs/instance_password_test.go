package structs

import (
	"strings"
	"testing"
)

func TestPasswordChunks(t *testing.T) {
	var inst Instance
	long := strings.Repeat("a", PasswordChunkLength) + strings.Repeat("b", PasswordChunkLength) + "c"
	inst.SetPassword(long)
	if inst.Password() != long || len(inst.SystemMetadata) != 3 || inst.SystemMetadata["password_2"] != "c" {
		t.Fatalf("system metadata %v", inst.SystemMetadata)
	}
	inst.SetPassword("short")
	if inst.Password() != "short" || len(inst.SystemMetadata) != 1 {
		t.Fatalf("after a shorter password: %v", inst.SystemMetadata)
	}
	c := inst.Copy()
	c.SetPassword("")
	if c.Password() != "" || c.SystemMetadata != nil || inst.Password() != "short" {
		t.Fatalf("clearing a copy: copy %v original %v", c.SystemMetadata, inst.SystemMetadata)
	}
}

func TestNeedsConfigDrive(t *testing.T) {
	cases := []struct {
		inst Instance
		want bool
	}{
		{Instance{}, false},
		{Instance{ConfigDrive: true}, true},
		{Instance{ImageProperties: map[string]string{"img_config_drive": "mandatory"}}, true},
		{Instance{ImageProperties: map[string]string{"img_config_drive": "optional"}}, false},
		{Instance{Flavor: &Flavor{ExtraSpecs: map[string]string{"hw:config_drive": "true"}}}, true},
		{Instance{Flavor: &Flavor{ExtraSpecs: map[string]string{"hw:config_drive": "false"}}}, false},
	}
	for i, c := range cases {
		if got := c.inst.NeedsConfigDrive(); got != c.want {
			t.Errorf("case %d: NeedsConfigDrive = %v, want %v", i, got, c.want)
		}
	}
}
