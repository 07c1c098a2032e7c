package structs

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Flavor is a hardware template for instances, as Nova's flavors are.
type Flavor struct {
	// ID is the flavor's id; Nova allows any string ("1", a UUID, …).
	ID          string
	Name        string
	VCPUs       int
	MemoryMB    int
	RootGB      int
	EphemeralGB int
	SwapMB      int
	RxTxFactor  float64
	IsPublic    bool
	Disabled    bool
	Description string
	// ExtraSpecs are free-form key/values read by the scheduler
	// (resources:CUSTOM_X=N, trait:X=required, hw:…).
	ExtraSpecs map[string]string
	// Projects may use a private flavor besides admins (Nova's flavor
	// access list), sorted; empty for public flavors.
	Projects []string `json:",omitempty"`

	CreateIndex uint64
	ModifyIndex uint64
}

var flavorIDPattern = regexp.MustCompile(`^[A-Za-z0-9._ -]{1,255}$`)

// Validate checks a flavor the way Nova's API does.
func (f *Flavor) Validate() error {
	var errs []string
	if f.ID == "" {
		errs = append(errs, "id is required")
	} else if !flavorIDPattern.MatchString(f.ID) || strings.TrimSpace(f.ID) != f.ID {
		errs = append(errs, "id may contain only letters, digits, '.', '_', '-' and inner spaces (1-255 characters)")
	}
	if name := strings.TrimSpace(f.Name); name == "" || len(f.Name) > 255 || name != f.Name {
		errs = append(errs, "name must be 1-255 characters without leading or trailing spaces")
	}
	if f.VCPUs < 1 || f.VCPUs > 1<<20 {
		errs = append(errs, "vcpus must be between 1 and 1048576")
	}
	if f.MemoryMB < 1 || f.MemoryMB > 1<<31-1 {
		errs = append(errs, "memory_mb must be between 1 and 2147483647")
	}
	if f.RootGB < 0 || f.RootGB > 1<<31-1 {
		errs = append(errs, "root_gb must be between 0 and 2147483647")
	}
	if f.EphemeralGB < 0 || f.EphemeralGB > 1<<31-1 {
		errs = append(errs, "ephemeral_gb must be between 0 and 2147483647")
	}
	if f.SwapMB < 0 || f.SwapMB > 1<<31-1 {
		errs = append(errs, "swap_mb must be between 0 and 2147483647")
	}
	if f.RxTxFactor < 0 || f.RxTxFactor > 3.4e38 {
		errs = append(errs, "rxtx_factor must be a positive number")
	}
	if len(f.Description) > 65535 {
		errs = append(errs, "description is longer than 65535 characters")
	}
	for k, v := range f.ExtraSpecs {
		if k == "" || len(k) > 255 || len(v) > 255 {
			errs = append(errs, fmt.Sprintf("extra spec %q: keys must be 1-255 and values 0-255 characters", k))
		}
	}
	if len(errs) > 0 {
		return Errorf(KindInvalid, "flavor: %s", strings.Join(errs, "; "))
	}
	return nil
}

// Copy returns a deep copy, so state-store objects are never mutated in place.
func (f *Flavor) Copy() *Flavor {
	if f == nil {
		return nil
	}
	c := *f
	c.Projects = slices.Clone(f.Projects)
	if f.ExtraSpecs != nil {
		c.ExtraSpecs = make(map[string]string, len(f.ExtraSpecs))
		for k, v := range f.ExtraSpecs {
			c.ExtraSpecs[k] = v
		}
	}
	return &c
}

// DevFlavors are devstack's default flavors, seeded in dev mode.
func DevFlavors() []*Flavor {
	mk := func(id, name string, vcpus, mem, disk int) *Flavor {
		return &Flavor{ID: id, Name: name, VCPUs: vcpus, MemoryMB: mem, RootGB: disk,
			RxTxFactor: 1.0, IsPublic: true, ExtraSpecs: map[string]string{}}
	}
	return []*Flavor{
		mk("1", "m1.tiny", 1, 512, 1),
		mk("2", "m1.small", 1, 2048, 20),
		mk("3", "m1.medium", 2, 4096, 40),
		mk("4", "m1.large", 4, 8192, 80),
		mk("5", "m1.xlarge", 8, 16384, 160),
	}
}

// FlavorUpsertRequest creates or replaces flavors.
type FlavorUpsertRequest struct {
	Flavors []*Flavor
	// CreateOnly makes an existing id a conflict instead of a replace.
	CreateOnly bool
	// CheckIndex, when set, makes the upsert of its one flavor a
	// compare-and-set: it applies only while the stored flavor's
	// ModifyIndex is still CheckIndex, else it fails with
	// ErrFlavorChanged, so a read-modify-write (an extra spec added, a
	// description set) never undoes a concurrent one. Servers refuse it
	// (KindUnavailable) until every server is at FSMLevelFlavorCAS.
	CheckIndex uint64
	WriteRequest
}

// ErrFlavorChanged is the message of the KindConflict an upsert with a
// CheckIndex fails with when the flavor changed since it was read.
const ErrFlavorChanged = "flavor changed since it was read"

// IsFlavorChanged reports whether err is a failed CheckIndex, which the
// writer retries from a fresh read.
func IsFlavorChanged(err error) bool {
	return KindOf(err) == KindConflict && strings.Contains(err.Error(), ErrFlavorChanged)
}

// FlavorDeleteRequest deletes flavors by id.
type FlavorDeleteRequest struct {
	IDs []string
	WriteRequest
}

// FlavorSpecificRequest reads one flavor by id or name.
type FlavorSpecificRequest struct {
	ID string
	QueryOptions
}

// FlavorListRequest lists flavors.
type FlavorListRequest struct {
	QueryOptions
}

// SingleFlavorResponse answers FlavorSpecificRequest.
type SingleFlavorResponse struct {
	Flavor *Flavor
	QueryMeta
}

// FlavorListResponse answers FlavorListRequest.
type FlavorListResponse struct {
	Flavors []*Flavor
	QueryMeta
}

// FlavorUpsertResponse answers FlavorUpsertRequest.
type FlavorUpsertResponse struct {
	Flavors []*Flavor
	WriteMeta
}

var resourceClassPattern = regexp.MustCompile(`^[A-Z0-9_]{1,255}$`)

// FlavorResources is what an instance of the flavor asks of a host, as
// Nova's request spec computes it: VCPU, MEMORY_MB and DISK_GB (root +
// ephemeral + swap rounded up to GB) from the flavor, overridden or
// extended by resources:CLASS=N extra specs (N=0 drops the class).
func FlavorResources(f *Flavor) (map[string]int64, error) {
	if f == nil {
		return nil, Errorf(KindInvalid, "no flavor")
	}
	res := map[string]int64{
		ResourceVCPU:     int64(f.VCPUs),
		ResourceMemoryMB: int64(f.MemoryMB),
		ResourceDiskGB:   int64(f.RootGB) + int64(f.EphemeralGB) + (int64(f.SwapMB)+1023)/1024,
	}
	for k, v := range f.ExtraSpecs {
		class, ok := strings.CutPrefix(k, "resources:")
		if !ok {
			continue
		}
		if !resourceClassPattern.MatchString(class) {
			return nil, Errorf(KindInvalid, "flavor %s: extra spec %q names an invalid resource class", f.ID, k)
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return nil, Errorf(KindInvalid, "flavor %s: extra spec %q=%q is not a non-negative integer", f.ID, k, v)
		}
		if n == 0 {
			delete(res, class)
		} else {
			res[class] = n
		}
	}
	for class, n := range res {
		if n == 0 {
			delete(res, class)
		}
	}
	return res, nil
}

// FlavorTraits returns the traits a flavor requires and forbids, from
// trait:NAME=required|forbidden extra specs.
func FlavorTraits(f *Flavor) (required, forbidden []string, err error) {
	for k, v := range f.ExtraSpecs {
		name, ok := strings.CutPrefix(k, "trait:")
		if !ok {
			continue
		}
		switch v {
		case "required":
			required = append(required, name)
		case "forbidden":
			forbidden = append(forbidden, name)
		default:
			return nil, nil, Errorf(KindInvalid, "flavor %s: extra spec %q must be required or forbidden, not %q", f.ID, k, v)
		}
	}
	sort.Strings(required)
	sort.Strings(forbidden)
	return required, forbidden, nil
}
