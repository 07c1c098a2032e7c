package virttest_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/fake"
	"github.com/stratus-cloud/stratus/virt/virttest"
)

func spec(_ *testing.T, id string) *virt.InstanceSpec {
	return &virt.InstanceSpec{ID: id, VCPUs: 1, MemoryMB: 256}
}

// coreOnly hides every optional interface of the fake and claims none.
type coreOnly struct{ virt.Driver }

func (coreOnly) Capabilities() virt.Capabilities { return virt.Capabilities{} }

// TestCoreOnlyDriverPasses checks a driver with no optional operations
// passes: the optional subtests skip instead of failing.
func TestCoreOnlyDriverPasses(t *testing.T) {
	virttest.Run(t, virttest.Harness{
		New:                  func(*testing.T) virt.Driver { return coreOnly{fake.New(fake.Config{})} },
		Spec:                 spec,
		MigrationDestination: "virttest-destination",
	})
}

// broken drivers, each with one defect the suite must catch in the
// named subtest.
type (
	capLie        struct{ *fake.Driver } // implements Pauser, says it cannot
	plainNotFound struct{ *fake.Driver } // loses ErrNotFound
	spawnTwice    struct{ *fake.Driver } // Spawn of an existing id fails
	noValidation  struct{ *fake.Driver } // accepts zero VCPUs
	sharedPower   struct{ *fake.Driver } // PowerOff stops every instance
	rebootStops   struct{ *fake.Driver } // hard reboot leaves it off
	silentConsole struct{ *fake.Driver } // console log stays empty
	stubPause     struct{ *fake.Driver } // Pause claimed, does nothing
	stubRescue    struct{ *fake.Driver } // Rescue leaves a stopped guest off
	migrateStays  struct{ *fake.Driver } // LiveMigrate succeeds, instance stays
	migrateLoses  struct{ *fake.Driver } // a failed LiveMigrate loses the instance
)

func (capLie) Capabilities() virt.Capabilities { return virt.Capabilities{Suspend: true} }

func (d plainNotFound) GetInfo(ctx context.Context, id string) (*virt.InstanceInfo, error) {
	info, err := d.Driver.GetInfo(ctx, id)
	if errors.Is(err, virt.ErrNotFound) {
		return nil, errors.New("no such domain")
	}
	return info, err
}

func (d spawnTwice) Spawn(ctx context.Context, s *virt.InstanceSpec) (*virt.InstanceInfo, error) {
	if _, err := d.Driver.GetInfo(ctx, s.ID); err == nil {
		return nil, errors.New("domain already exists")
	}
	return d.Driver.Spawn(ctx, s)
}

func (d noValidation) Spawn(ctx context.Context, s *virt.InstanceSpec) (*virt.InstanceInfo, error) {
	c := *s
	c.VCPUs = max(c.VCPUs, 1)
	return d.Driver.Spawn(ctx, &c)
}

func (d sharedPower) PowerOff(ctx context.Context, _ string, timeout time.Duration) error {
	ids, _ := d.Driver.ListInstances(ctx)
	for _, id := range ids {
		if err := d.Driver.PowerOff(ctx, id, timeout); err != nil {
			return err
		}
	}
	return nil
}

func (d rebootStops) Reboot(ctx context.Context, id string, hard bool) error {
	if hard {
		return d.Driver.PowerOff(ctx, id, 0)
	}
	return d.Driver.Reboot(ctx, id, hard)
}

func (silentConsole) ConsoleOutput(context.Context, string, int) (string, error) { return "", nil }

func (stubPause) Pause(context.Context, string) error { return nil }

func (stubRescue) Rescue(context.Context, string, string) error { return nil }

func (migrateStays) LiveMigrate(context.Context, string, string) error { return nil }

func (d migrateLoses) LiveMigrate(ctx context.Context, id, dest string) error {
	if err := d.Driver.LiveMigrate(ctx, id, dest); err != nil {
		_ = d.Driver.Destroy(ctx, id)
		return err
	}
	return nil
}

var broken = map[string]struct {
	new      func() virt.Driver
	subtests []string // that must fail
}{
	"capLie":        {func() virt.Driver { return capLie{fake.New(fake.Config{})} }, []string{"Capabilities"}},
	"plainNotFound": {func() virt.Driver { return plainNotFound{fake.New(fake.Config{})} }, []string{"Destroy", "UnknownID", "InvalidSpec"}},
	"spawnTwice":    {func() virt.Driver { return spawnTwice{fake.New(fake.Config{})} }, []string{"SpawnIdempotent"}},
	"noValidation":  {func() virt.Driver { return noValidation{fake.New(fake.Config{})} }, []string{"InvalidSpec"}},
	"sharedPower":   {func() virt.Driver { return sharedPower{fake.New(fake.Config{})} }, []string{"Independent"}},
	"rebootStops":   {func() virt.Driver { return rebootStops{fake.New(fake.Config{})} }, []string{"Reboot"}},
	"badResources": {func() virt.Driver {
		return fake.New(fake.Config{CustomResources: map[string]int64{"FPGA": 1}}) // no CUSTOM_ prefix
	}, []string{"HostInfo"}},
	"silentConsole": {func() virt.Driver { return silentConsole{fake.New(fake.Config{})} }, []string{"ConsoleOutput"}},
	"stubPause":     {func() virt.Driver { return stubPause{fake.New(fake.Config{})} }, []string{"PauseUnpause"}},
	"stubRescue":    {func() virt.Driver { return stubRescue{fake.New(fake.Config{})} }, []string{"RescueUnrescue"}},
	"migrateStays":  {func() virt.Driver { return migrateStays{fake.New(fake.Config{})} }, []string{"LiveMigrate"}},
	"migrateLoses":  {func() virt.Driver { return migrateLoses{fake.New(fake.Config{})} }, []string{"LiveMigrate"}},
}

// TestSuiteCatchesBrokenDrivers proves the suite has teeth: each broken
// driver must fail the subtest aimed at its defect.
//
// The test runs itself again as a child process for each broken driver
// (named by $VIRTTEST_BROKEN); in the child it runs the suite on that
// driver, which must fail.
func TestSuiteCatchesBrokenDrivers(t *testing.T) {
	if name := os.Getenv("VIRTTEST_BROKEN"); name != "" {
		b, ok := broken[name]
		if !ok {
			t.Fatalf("no broken driver %q", name)
		}
		virttest.Run(t, virttest.Harness{
			New:                  func(*testing.T) virt.Driver { return b.new() },
			Spec:                 spec,
			Timeout:              200 * time.Millisecond,
			MigrationDestination: "virttest-destination",
		})
		return
	}
	for name, b := range broken {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestSuiteCatchesBrokenDrivers$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), "VIRTTEST_BROKEN="+name)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("suite on %s: err %v, want it to fail; output:\n%s", name, err, out)
			}
			for _, sub := range b.subtests {
				if !strings.Contains(string(out), "--- FAIL: TestSuiteCatchesBrokenDrivers/"+sub+" ") {
					t.Errorf("suite on %s did not fail %s; output:\n%s", name, sub, out)
				}
			}
		})
	}
}
