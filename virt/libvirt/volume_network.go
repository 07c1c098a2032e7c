package libvirt

import (
	"fmt"
	"net"
	"slices"
	"strings"

	"libvirt.org/go/libvirtxml"

	"github.com/stratus-cloud/stratus/virt"
)

// metaNetwork is where a network volume is served, in the instance's
// record: enough to rebuild its disk after an agent restart. The cephx
// key is not here, only the libvirt secret that holds it.
type metaNetwork struct {
	Protocol   string `xml:"protocol,attr"`
	Name       string `xml:"name,attr"`
	Hosts      string `xml:"hosts,attr"`
	TLS        bool   `xml:"tls,attr,omitempty"`
	User       string `xml:"user,attr,omitempty"`
	SecretUUID string `xml:"secret,attr,omitempty"`
}

// newMetaVolume is the record of volume v attached as dev: a file's
// format read from the file (which must exist), a network disk checked
// and kept as given (raw, as QEMU sees NBD exports and RBD images).
func newMetaVolume(v *virt.Volume, dev string) (metaVolume, error) {
	if v.ID == "" || (v.Path == "") == (v.Network == nil) {
		return metaVolume{}, fmt.Errorf("volume %q: a volume needs an id and either a path or a network source", v.ID)
	}
	if v.Network == nil {
		format, err := fileFormat(v.Path)
		if err != nil {
			return metaVolume{}, fmt.Errorf("volume %s: %w", v.ID, err)
		}
		return metaVolume{ID: v.ID, Path: v.Path, Device: dev, Format: format}, nil
	}
	n := v.Network
	if n.Protocol != virt.NetworkNBD && n.Protocol != virt.NetworkRBD {
		return metaVolume{}, fmt.Errorf("volume %s: unknown network protocol %q", v.ID, n.Protocol)
	}
	if n.Name == "" || len(n.Hosts) == 0 {
		return metaVolume{}, fmt.Errorf("volume %s: a network volume needs a name and a host", v.ID)
	}
	for _, h := range n.Hosts {
		if _, _, err := net.SplitHostPort(h); err != nil || strings.Contains(h, ",") {
			return metaVolume{}, fmt.Errorf("volume %s: server %q is not host:port", v.ID, h)
		}
	}
	return metaVolume{ID: v.ID, Device: dev, Format: "raw", Network: &metaNetwork{
		Protocol: n.Protocol, Name: n.Name, Hosts: strings.Join(n.Hosts, ","),
		TLS: n.TLS, User: n.User, SecretUUID: n.SecretUUID,
	}}, nil
}

// sameSource reports whether v is served from where m records it.
func (m metaVolume) sameSource(v *virt.Volume) bool {
	if v.Network == nil || m.Network == nil {
		return v.Network == nil && m.Network == nil && m.Path == v.Path
	}
	n := v.Network
	return m.Network.Protocol == n.Protocol && m.Network.Name == n.Name &&
		slices.Equal(strings.Split(m.Network.Hosts, ","), n.Hosts)
}

// source is the volume's libvirt disk source: its file, or its network
// server with TLS and cephx authentication as recorded.
func (m metaVolume) source() *libvirtxml.DomainDiskSource {
	n := m.Network
	if n == nil {
		return &libvirtxml.DomainDiskSource{File: &libvirtxml.DomainDiskSourceFile{File: m.Path}}
	}
	src := &libvirtxml.DomainDiskSourceNetwork{Protocol: n.Protocol, Name: n.Name}
	for _, h := range strings.Split(n.Hosts, ",") {
		host, port, _ := net.SplitHostPort(h)
		src.Hosts = append(src.Hosts, libvirtxml.DomainDiskSourceHost{Name: host, Port: port})
	}
	if n.TLS {
		src.TLS = "yes"
	}
	if n.User != "" {
		src.Auth = &libvirtxml.DomainDiskAuth{Username: n.User}
		if n.SecretUUID != "" {
			src.Auth.Secret = &libvirtxml.DomainDiskSecret{Type: "ceph", UUID: n.SecretUUID}
		}
	}
	return &libvirtxml.DomainDiskSource{Network: src}
}
