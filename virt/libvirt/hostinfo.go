package libvirt

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/stratus-cloud/stratus/virt"
)

// cpuTraits maps libvirt's CPU feature names to the os-traits Placement
// knows them by.
var cpuTraits = map[string]string{
	"sse": "HW_CPU_X86_SSE", "sse2": "HW_CPU_X86_SSE2", "pni": "HW_CPU_X86_SSE3",
	"ssse3": "HW_CPU_X86_SSSE3", "sse4.1": "HW_CPU_X86_SSE41", "sse4.2": "HW_CPU_X86_SSE42",
	"avx": "HW_CPU_X86_AVX", "avx2": "HW_CPU_X86_AVX2", "avx512f": "HW_CPU_X86_AVX512F",
	"aes": "HW_CPU_X86_AESNI", "fma": "HW_CPU_X86_FMA3", "f16c": "HW_CPU_X86_F16C",
	"bmi1": "HW_CPU_X86_BMI", "bmi2": "HW_CPU_X86_BMI2", "vmx": "HW_CPU_X86_VMX",
	"svm": "HW_CPU_X86_SVM", "sha-ni": "HW_CPU_X86_SHA", "mmx": "HW_CPU_X86_MMX",
}

// capabilities reads and parses libvirtd's capabilities XML.
func capabilities(lv *golibvirt.Libvirt) (*libvirtxml.Caps, error) {
	doc, err := lv.ConnectGetCapabilities()
	if err != nil {
		return nil, fmt.Errorf("capabilities: %w", err)
	}
	var caps libvirtxml.Caps
	if err := caps.Unmarshal(doc); err != nil {
		return nil, fmt.Errorf("capabilities: %w", err)
	}
	return &caps, nil
}

// chooseVirtType picks the domain type for the host's architecture from
// the capabilities: the configured one if offered, else kvm when libvirt
// offers it (it does only when /dev/kvm is usable), else qemu (TCG).
func chooseVirtType(caps *libvirtxml.Caps, configured string) (virtType, arch string, err error) {
	arch = "x86_64"
	if caps.Host.CPU != nil && caps.Host.CPU.Arch != "" {
		arch = caps.Host.CPU.Arch
	}
	var offered []string
	for _, g := range caps.Guests {
		if g.OSType != "hvm" || g.Arch.Name != arch {
			continue
		}
		for _, dom := range g.Arch.Domains {
			offered = append(offered, dom.Type)
		}
	}
	switch {
	case configured != "":
		if !slices.Contains(offered, configured) {
			return "", arch, fmt.Errorf("virt type %s is not offered by libvirtd for %s (offered: %v)", configured, arch, offered)
		}
		return configured, arch, nil
	case slices.Contains(offered, "kvm"):
		return "kvm", arch, nil
	case slices.Contains(offered, "qemu"):
		return "qemu", arch, nil
	}
	return "", arch, fmt.Errorf("libvirtd offers no QEMU guests for %s (is qemu-system-%s installed?)", arch, arch)
}

// hostType returns the domain type and architecture new domains get,
// asking libvirtd once per connection.
func (d *Driver) hostType(lv *golibvirt.Libvirt) (virtType, arch string, err error) {
	d.hostMu.Lock()
	virtType, arch = d.virtType, d.arch
	d.hostMu.Unlock()
	if virtType != "" {
		return virtType, arch, nil
	}
	caps, err := capabilities(lv)
	if err != nil {
		return "", "", err
	}
	virtType, arch, err = chooseVirtType(caps, d.cfg.VirtType)
	if err != nil {
		return "", "", err
	}
	d.hostMu.Lock()
	d.virtType, d.arch = virtType, arch
	d.hostMu.Unlock()
	return virtType, arch, nil
}

// HostInfo fingerprints the host through libvirtd: CPUs and memory
// (NodeGetInfo), architecture, CPU model (the host-model CPU of the domain
// capabilities) and CPU features as traits (capabilities XML), hypervisor
// type "QEMU" and QEMU's version, and the free space of ImagesDir's file
// system as disk. Attributes carry virt_type (kvm or qemu),
// libvirt_version, libvirt_uri and, when configured, migration_uri.
func (d *Driver) HostInfo(ctx context.Context) (*virt.HostInfo, error) {
	var hi *virt.HostInfo
	err := d.read(ctx, "HostInfo", "", func(ctx context.Context, lv *golibvirt.Libvirt) error {
		var err error
		hi, err = d.hostInfo(lv)
		return err
	})
	return hi, err
}

func (d *Driver) hostInfo(lv *golibvirt.Libvirt) (*virt.HostInfo, error) {
	_, memKiB, cpus, _, _, _, _, _, err := lv.NodeGetInfo()
	if err != nil {
		return nil, fmt.Errorf("node info: %w", err)
	}
	caps, err := capabilities(lv)
	if err != nil {
		return nil, err
	}
	virtType, arch, err := chooseVirtType(caps, d.cfg.VirtType)
	if err != nil {
		return nil, err
	}
	hostname := d.cfg.HostName
	if hostname == "" {
		if hostname, err = lv.ConnectGetHostname(); err != nil {
			return nil, fmt.Errorf("hostname: %w", err)
		}
	}
	hvVer, err := lv.ConnectGetVersion()
	if err != nil {
		return nil, fmt.Errorf("hypervisor version: %w", err)
	}
	libVer, err := lv.ConnectGetLibVersion()
	if err != nil {
		return nil, fmt.Errorf("libvirt version: %w", err)
	}
	hi := &virt.HostInfo{
		Hostname:          hostname,
		Arch:              arch,
		VCPUs:             int64(cpus),
		MemoryMB:          int64(memKiB / 1024),
		DiskGB:            freeGB(d.cfg.ImagesDir),
		HypervisorType:    "QEMU",
		HypervisorVersion: version(hvVer),
		Attributes: map[string]string{
			"virt_type":       virtType,
			"libvirt_version": version(libVer),
			"libvirt_uri":     d.cfg.URI,
		},
	}
	if d.cfg.MigrationURI != "" {
		hi.Attributes["migration_uri"] = d.cfg.MigrationURI
	}
	if cpu := caps.Host.CPU; cpu != nil {
		hi.CPUModel = cpu.Model
		for _, f := range cpu.FeatureFlags {
			if t, ok := cpuTraits[f.Name]; ok {
				hi.Traits = append(hi.Traits, t)
			}
		}
	}
	if arch == "x86_64" {
		hi.Traits = append(hi.Traits, "HW_ARCH_X86_64")
	}
	slices.Sort(hi.Traits)
	// The CPU model guests get with host-model, if libvirt knows one.
	if doc, err := lv.ConnectGetDomainCapabilities(nil, []string{arch}, nil, []string{virtType}, 0); err == nil {
		var dc libvirtxml.DomainCaps
		if dc.Unmarshal(doc) == nil && dc.CPU != nil {
			for _, mode := range dc.CPU.Modes {
				if mode.Name == "host-model" && mode.Supported == "yes" && len(mode.Models) > 0 && mode.Models[0].Name != "" {
					hi.CPUModel = mode.Models[0].Name
				}
			}
		}
	}
	return hi, nil
}

// version renders libvirt's version number, major*1e6+minor*1e3+micro.
func version(v uint64) string {
	return fmt.Sprintf("%d.%d.%d", v/1000000, v/1000%1000, v%1000)
}

// freeGB is the free space of the file system dir is (or will be) on,
// in whole GiB.
func freeGB(dir string) int64 {
	for {
		var st syscall.Statfs_t
		if err := syscall.Statfs(dir, &st); err == nil {
			return int64(st.Bavail) * int64(st.Bsize) / gib
		}
		parent := filepath.Dir(dir)
		if parent == dir || !strings.HasPrefix(parent, string(os.PathSeparator)) {
			return 0
		}
		dir = parent
	}
}
