package virt

import "fmt"

// RescueSpec says what a rescue boots and how its disk is laid out.
type RescueSpec struct {
	// Image is "" for the instance's own image, else an absolute path
	// to a local image file (the agent resolves image ids to their
	// cached files before it calls a driver).
	Image string
	// Device and Bus are the rescue image's hw_rescue_device (disk,
	// cdrom or floppy) and hw_rescue_bus. With either set the rescue is
	// Nova's stable device rescue: the instance's disks stay where they
	// are and the rescue disk is added as a Device on Bus, first in the
	// boot order. With neither, the legacy layout: the rescue disk
	// first, the root disk second.
	Device, Bus string
}

// Stable reports whether the rescue keeps the instance's disk layout.
func (r RescueSpec) Stable() bool { return r.Device != "" || r.Bus != "" }

// Image properties of stable device rescue (Nova's
// nova.virt.hardware.check_hw_rescue_props).
const (
	PropRescueDevice = "hw_rescue_device"
	PropRescueBus    = "hw_rescue_bus"
)

// rescueDevices and rescueBuses are the values Nova's image property
// schema allows (fields.BlockDeviceType for the device; DiskBus less
// the buses of drivers Stratus does not have).
var (
	rescueDevices = map[string]bool{"disk": true, "cdrom": true, "floppy": true}
	rescueBuses   = map[string]bool{"virtio": true, "ide": true, "sata": true, "scsi": true, "usb": true, "fdc": true}
)

// RescueSpecFor reads a rescue image's properties: with either
// hw_rescue_device or hw_rescue_bus the rescue is stable, the device
// defaulting to a disk. Values Nova's schema would not take are an
// error naming the property.
func RescueSpecFor(image string, props map[string]string) (RescueSpec, error) {
	r := RescueSpec{Image: image, Device: props[PropRescueDevice], Bus: props[PropRescueBus]}
	if !r.Stable() {
		return r, nil
	}
	if r.Device == "" {
		r.Device = "disk"
	}
	if !rescueDevices[r.Device] {
		return r, fmt.Errorf("image property %s=%q: want disk, cdrom or floppy", PropRescueDevice, r.Device)
	}
	if r.Bus != "" && !rescueBuses[r.Bus] {
		return r, fmt.Errorf("image property %s=%q: want virtio, ide, sata, scsi, usb or fdc", PropRescueBus, r.Bus)
	}
	if r.Device == "floppy" && r.Bus == "" {
		r.Bus = "fdc"
	}
	if (r.Device == "floppy") != (r.Bus == "fdc") {
		return r, fmt.Errorf("image properties %s=%q and %s=%q: a floppy is on the fdc bus and only a floppy is", PropRescueDevice, r.Device, PropRescueBus, r.Bus)
	}
	return r, nil
}
