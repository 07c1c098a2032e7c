package libvirt

import (
	"encoding/xml"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"libvirt.org/go/libvirtxml"
)

// MetadataURI is the XML namespace of the <metadata> element that ties a
// domain to a Stratus instance; ListInstances lists the domains that
// carry it (with the driver's namespace).
const MetadataURI = "https://stratus-cloud.dev/xmlns/libvirt/instance/1"

// Roles of an instance's disks, and the suffixes of their volume names.
const (
	diskRoot      = "disk"
	diskEphemeral = "disk.eph0"
	diskSwap      = "disk.swap"
	diskRescue    = "disk.rescue"
	// diskConfig is the config drive, a read-only CD-ROM.
	diskConfig = "disk.config"
)

// allDiskRoles are every volume an instance may own, for clean-up.
var allDiskRoles = []string{diskRoot, diskEphemeral, diskSwap, diskRescue, diskConfig}

// attemptSep separates a volume name's domain name from its attempt. It
// is a character instance ids cannot contain (idRE), so that no
// instance's volume names are another's.
const attemptSep = "+"

// instanceMeta is the driver's record of one instance, kept in the
// domain's <metadata>: everything needed to define the domain again
// (resize, rescue) and to recognise it after a restart of the agent.
type instanceMeta struct {
	// XMLName matches <instance> in any namespace: DomainGetMetadata
	// returns the element without its namespace.
	XMLName xml.Name `xml:"instance"`
	// XMLNS is MetadataURI when the record is written.
	XMLNS     string `xml:"xmlns,attr,omitempty"`
	ID        string `xml:"id"`
	Name      string `xml:"name,omitempty"`
	Namespace string `xml:"namespace,omitempty"`
	Created   string `xml:"created,omitempty"`
	// Attempt is the random suffix of the volumes this domain created
	// (attempt.go): unique per spawn and per move, so that two hosts
	// building the same instance on shared storage never name the same
	// file. Domains defined before it existed have none; their disks
	// keep the names recorded in Disks.
	Attempt string     `xml:"attempt,omitempty"`
	Flavor  metaFlavor `xml:"flavor"`
	// Image is the base the root disk was built on; nil for an empty
	// root disk (no operating system).
	Image *metaImage `xml:"image"`
	// Disks are the volumes the instance owns in the pool.
	Disks []metaDisk `xml:"disks>disk"`
	// DiskBus and Machine come from the image properties hw_disk_bus
	// and hw_machine_type.
	DiskBus    string `xml:"disk_bus,omitempty"`
	Machine    string `xml:"machine,omitempty"`
	ConsoleLog string `xml:"console_log"`
	// Rescue is set while the instance runs from a rescue disk.
	Rescue *metaImage `xml:"rescue"`
	// RescueDevice and RescueBus are a stable rescue's layout
	// (rescue.go); both empty for the legacy one.
	RescueDevice string `xml:"rescue_device,omitempty"`
	RescueBus    string `xml:"rescue_bus,omitempty"`
	// NICs are the instance's network interfaces (interfaces.go).
	NICs []metaNIC `xml:"nics>nic"`
	// Volumes are the block devices attached with AttachVolume
	// (volumes.go).
	Volumes []metaVolume `xml:"volumes>volume"`
	// RootVolume is the volume the instance boots from (boot_volume.go),
	// nil when its root disk is its own.
	RootVolume *metaVolume `xml:"root_volume"`
}

type metaFlavor struct {
	VCPUs       int `xml:"vcpus,attr"`
	MemoryMB    int `xml:"memory_mb,attr"`
	RootGB      int `xml:"root_gb,attr"`
	EphemeralGB int `xml:"ephemeral_gb,attr"`
	SwapMB      int `xml:"swap_mb,attr"`
}

type metaImage struct {
	ID string `xml:"id,attr,omitempty"`
	// Source is the file the base was copied from; Base the cached
	// copy's path in the pool and Format its format (raw or qcow2).
	Source string `xml:"source,attr,omitempty"`
	Base   string `xml:"base,attr,omitempty"`
	Format string `xml:"format,attr,omitempty"`
}

type metaDisk struct {
	Role   string `xml:"role,attr"`
	Volume string `xml:"volume,attr"`
	Path   string `xml:"path,attr"`
}

// disk returns the instance's disk of a role, or nil.
func (m *instanceMeta) disk(role string) *metaDisk {
	for i := range m.Disks {
		if m.Disks[i].Role == role {
			return &m.Disks[i]
		}
	}
	return nil
}

// setDisk records a disk, replacing one of the same role.
func (m *instanceMeta) setDisk(d metaDisk) {
	if old := m.disk(d.Role); old != nil {
		*old = d
		return
	}
	m.Disks = append(m.Disks, d)
}

// dropDisk forgets the disk of a role.
func (m *instanceMeta) dropDisk(role string) {
	out := m.Disks[:0]
	for _, d := range m.Disks {
		if d.Role != role {
			out = append(out, d)
		}
	}
	m.Disks = out
}

// hasOS reports whether the instance booted from an image, so that its
// guest may answer ACPI requests; an empty root disk has nothing that
// would.
func (m *instanceMeta) hasOS() bool {
	if m.Rescue != nil {
		return m.Rescue.Base != ""
	}
	return m.Image != nil && m.Image.Base != ""
}

// marshal renders the record as the inner XML of <metadata>.
func (m *instanceMeta) marshal() (string, error) {
	c := *m
	c.XMLNS = MetadataURI
	out, err := xml.Marshal(&c)
	if err != nil {
		return "", fmt.Errorf("encode instance metadata: %w", err)
	}
	return string(out), nil
}

// parseMeta reads a record from the element DomainGetMetadata returns.
func parseMeta(doc string) (*instanceMeta, error) {
	var m instanceMeta
	if err := xml.Unmarshal([]byte(doc), &m); err != nil {
		return nil, fmt.Errorf("decode instance metadata: %w", err)
	}
	if m.ID == "" {
		return nil, fmt.Errorf("instance metadata without an id")
	}
	m.XMLNS = ""
	return &m, nil
}

// uuidNamespace seeds the name-based domain UUIDs.
var uuidNamespace = uuid.MustParse("6f2a4c1e-57a7-4e8b-9d2b-5a1f0c3e7b10")

// domainUUID is the UUID of an instance's domain: the instance id itself
// when it is a UUID and the driver has no namespace (as Nova does), else
// one derived from both, so that drivers sharing a libvirtd never clash.
// Being deterministic, it also makes libvirt refuse a second copy.
func (d *Driver) domainUUID(id string) string {
	if d.cfg.Namespace == "" {
		if u, err := uuid.Parse(id); err == nil {
			return u.String()
		}
	}
	return uuid.NewSHA1(uuidNamespace, []byte(d.cfg.Namespace+"\x00"+id)).String()
}

// domainName is an instance's domain name: the prefix and its id.
func (d *Driver) domainName(id string) string { return d.prefix + id }

// instanceID returns the instance id of a domain name of ours.
func (d *Driver) instanceID(domainName string) (string, bool) {
	id, ok := strings.CutPrefix(domainName, d.prefix)
	return id, ok && id != ""
}

// legacyVolumeName is the name an instance's disk of a role had before
// volume names carried an attempt; such disks are still found through
// the names recorded in the domain's metadata.
func (d *Driver) legacyVolumeName(id, role string) string { return d.domainName(id) + "-" + role }

// diskTargets are the device names disks get, in order.
var diskTargets = map[string][]string{
	"virtio": {"vda", "vdb", "vdc", "vdd"},
	"sata":   {"sda", "sdb", "sdc", "sdd"},
	"ide":    {"hda", "hdb", "hdc", "hdd"},
}

// domainXML builds the domain of an instance from its record: its disks
// (domainDisks) and devices (domainDevices), ACPI, the host's CPU model
// under KVM, and SeaBIOS on the serial console.
func (d *Driver) domainXML(m *instanceMeta, virtType, arch string) (string, error) {
	disks, boot, err := m.domainDisks(arch)
	if err != nil {
		return "", err
	}
	meta, err := m.marshal()
	if err != nil {
		return "", err
	}
	var cpu *libvirtxml.DomainCPU
	if virtType == "kvm" {
		cpu = &libvirtxml.DomainCPU{Mode: "host-model"}
	}
	dom := &libvirtxml.Domain{
		Type:     virtType,
		Name:     d.domainName(m.ID),
		UUID:     d.domainUUID(m.ID),
		Title:    m.Name,
		Metadata: &libvirtxml.DomainMetadata{XML: meta},
		Memory:   &libvirtxml.DomainMemory{Value: uint(m.Flavor.MemoryMB), Unit: "MiB"},
		VCPU:     &libvirtxml.DomainVCPU{Placement: "static", Value: uint(m.Flavor.VCPUs)},
		OS: &libvirtxml.DomainOS{
			Type:        &libvirtxml.DomainOSType{Type: "hvm", Arch: arch, Machine: m.Machine},
			BootDevices: boot,
			// SeaBIOS writes to the serial console too, so even a guest
			// without an operating system logs its boot.
			BIOS: &libvirtxml.DomainBIOS{UseSerial: "yes"},
		},
		Features: &libvirtxml.DomainFeatureList{
			ACPI: &libvirtxml.DomainFeature{},
			APIC: &libvirtxml.DomainFeatureAPIC{},
		},
		CPU:        cpu,
		Clock:      &libvirtxml.DomainClock{Offset: "utc"},
		OnPoweroff: "destroy",
		OnReboot:   "restart",
		OnCrash:    "destroy",
		Devices:    d.domainDevices(m, disks),
	}
	return dom.Marshal()
}

// domainDisks lays out the domain's disks: the rescue disk first when
// it is rescued the legacy way (with the root disk second and no
// others), else the root (a file or the boot volume), ephemeral and
// swap disks on the image's bus; then the attached volumes and the
// config drive. A stable-device rescue keeps every disk in place and
// boots the rescue disk by per-device order instead of <os><boot>.
func (m *instanceMeta) domainDisks(arch string) ([]libvirtxml.DomainDisk, []libvirtxml.DomainBootDevice, error) {
	bus := m.DiskBus
	if bus == "" {
		bus = "virtio"
	}
	targets := diskTargets[bus]
	var roles []string
	if m.Rescue != nil && m.RescueDevice == "" {
		roles = []string{diskRescue, diskRoot}
	} else {
		roles = []string{diskRoot, diskEphemeral, diskSwap}
	}
	var disks []libvirtxml.DomainDisk
	for _, role := range roles {
		if len(disks) == len(targets) {
			return nil, nil, fmt.Errorf("too many disks for bus %s", bus)
		}
		if role == diskRoot && m.RootVolume != nil {
			disks = append(disks, rootVolumeDisk(*m.RootVolume, targets[len(disks)], bus))
			continue
		}
		disk := m.disk(role)
		if disk == nil {
			continue
		}
		disks = append(disks, libvirtxml.DomainDisk{
			Device: "disk",
			Driver: &libvirtxml.DomainDiskDriver{Name: "qemu", Type: "qcow2", Discard: "unmap"},
			Source: &libvirtxml.DomainDiskSource{File: &libvirtxml.DomainDiskSourceFile{File: disk.Path}},
			Target: &libvirtxml.DomainDiskTarget{Dev: targets[len(disks)], Bus: bus},
			Serial: role,
		})
	}
	if len(disks) == 0 {
		return nil, nil, fmt.Errorf("instance %s has no root disk", m.ID)
	}
	disks = append(disks, m.volumeDisks()...)
	if cd := m.disk(diskConfig); cd != nil {
		disks = append(disks, configDriveDisk(cd.Path, m.Machine, arch))
	}
	boot := []libvirtxml.DomainBootDevice{{Dev: "hd"}}
	if m.Rescue != nil && m.RescueDevice != "" {
		withRescue, err := m.stableRescueDisks(disks)
		if err != nil {
			return nil, nil, err
		}
		disks, boot = withRescue, nil // per-device boot order instead
	}
	return disks, boot, nil
}

// domainDevices are the domain's devices besides its disks: a serial
// console logged to a file, VNC on a port libvirt picks, the guest
// agent's channel, the instance's NICs and volume controllers.
func (d *Driver) domainDevices(m *instanceMeta, disks []libvirtxml.DomainDisk) *libvirtxml.DomainDeviceList {
	port := uint(0)
	return &libvirtxml.DomainDeviceList{
		Disks:       disks,
		Controllers: m.volumeControllers(),
		Interfaces:  m.interfaces(),
		Serials: []libvirtxml.DomainSerial{{
			Source: &libvirtxml.DomainChardevSource{Pty: &libvirtxml.DomainChardevSourcePty{}},
			Target: &libvirtxml.DomainSerialTarget{Port: &port},
			Log:    &libvirtxml.DomainChardevLog{File: m.ConsoleLog, Append: "on"},
		}},
		Consoles: []libvirtxml.DomainConsole{{
			Source: &libvirtxml.DomainChardevSource{Pty: &libvirtxml.DomainChardevSourcePty{}},
			Target: &libvirtxml.DomainConsoleTarget{Type: "serial", Port: &port},
		}},
		Graphics: []libvirtxml.DomainGraphic{{VNC: &libvirtxml.DomainGraphicVNC{
			AutoPort: "yes",
			Listen:   d.cfg.VNCListen,
			Listeners: []libvirtxml.DomainGraphicListener{{
				Address: &libvirtxml.DomainGraphicListenerAddress{Address: d.cfg.VNCListen},
			}},
		}}},
		// The QEMU guest agent's channel (guest.go); libvirt picks
		// the socket's path.
		Channels: []libvirtxml.DomainChannel{{
			Source: &libvirtxml.DomainChardevSource{UNIX: &libvirtxml.DomainChardevSourceUNIX{Mode: "bind"}},
			Target: &libvirtxml.DomainChannelTarget{VirtIO: &libvirtxml.DomainChannelTargetVirtIO{Name: GuestAgentChannel}},
		}},
		Videos:     []libvirtxml.DomainVideo{{Model: libvirtxml.DomainVideoModel{Type: "vga"}}},
		MemBalloon: &libvirtxml.DomainMemBalloon{Model: "virtio"},
	}
}
