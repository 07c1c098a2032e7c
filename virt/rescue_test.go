package virt

import (
	"strings"
	"testing"
)

func TestRescueSpecFor(t *testing.T) {
	for _, tc := range []struct {
		props      map[string]string
		want       RescueSpec
		wantErr    string
		wantStable bool
	}{
		{props: nil, want: RescueSpec{Image: "img"}},
		{props: map[string]string{"hw_disk_bus": "scsi"}, want: RescueSpec{Image: "img"}},
		{props: map[string]string{PropRescueBus: "usb"}, want: RescueSpec{Image: "img", Device: "disk", Bus: "usb"}, wantStable: true},
		{props: map[string]string{PropRescueDevice: "cdrom"}, want: RescueSpec{Image: "img", Device: "cdrom"}, wantStable: true},
		{props: map[string]string{PropRescueDevice: "floppy"}, want: RescueSpec{Image: "img", Device: "floppy", Bus: "fdc"}, wantStable: true},
		{props: map[string]string{PropRescueDevice: "tape"}, wantErr: "want disk, cdrom or floppy"},
		{props: map[string]string{PropRescueBus: "xen"}, wantErr: "want virtio"},
		{props: map[string]string{PropRescueDevice: "disk", PropRescueBus: "fdc"}, wantErr: "only a floppy is"},
		{props: map[string]string{PropRescueDevice: "floppy", PropRescueBus: "ide"}, wantErr: "only a floppy is"},
	} {
		got, err := RescueSpecFor("img", tc.props)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: %v, want an error with %q", tc.props, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want || got.Stable() != tc.wantStable {
			t.Errorf("%v: %+v (stable %v) %v, want %+v", tc.props, got, got.Stable(), err, tc.want)
		}
	}
}
