package vmware

import (
	"context"
	"fmt"
	"net/url"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// inv is a logged-in session and the inventory objects the config
// names, resolved once per session.
type inv struct {
	vc      *vim25.Client
	sm      *session.Manager
	dc      *object.Datacenter
	cluster *object.ClusterComputeResource
	ds      *object.Datastore
	pool    *object.ResourcePool
	folder  *object.Folder
}

// session returns the logged-in session, logging in (again) when there
// is none or it expired.
func (d *Driver) session(ctx context.Context) (*inv, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.inv != nil {
		if s, err := d.inv.sm.UserSession(ctx); err == nil && s != nil {
			return d.inv, nil
		}
		d.logger.Info("vCenter session expired; logging in again")
		d.inv = nil
	}
	i, err := d.login(ctx)
	if err != nil {
		return nil, err
	}
	d.inv = i
	return i, nil
}

// login connects to vCenter and resolves the inventory.
func (d *Driver) login(ctx context.Context) (*inv, error) {
	u, err := url.Parse(d.cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("vmware: url: %w", err)
	}
	user := u.User
	u.User = nil
	if d.cfg.Username != "" {
		user = url.UserPassword(d.cfg.Username, d.cfg.Password)
	}
	sc := soap.NewClient(u, d.cfg.Insecure)
	if d.cfg.CAFile != "" {
		if err := sc.SetRootCAs(d.cfg.CAFile); err != nil {
			return nil, fmt.Errorf("vmware: ca_file %s: %w", d.cfg.CAFile, err)
		}
	}
	vc, err := vim25.NewClient(ctx, sc)
	if err != nil {
		return nil, fmt.Errorf("vmware: connect to %s: %w", u.Host, err)
	}
	i := &inv{vc: vc, sm: session.NewManager(vc)}
	if user != nil {
		if err := i.sm.Login(ctx, user); err != nil {
			return nil, fmt.Errorf("vmware: log in to %s as %s: %w", u.Host, user.Username(), err)
		}
	}
	if err := d.resolve(ctx, i); err != nil {
		_ = i.sm.Logout(context.WithoutCancel(ctx))
		return nil, err
	}
	return i, nil
}

// resolve finds the datacenter, cluster, datastore, pool and folder.
func (d *Driver) resolve(ctx context.Context, i *inv) error {
	f := find.NewFinder(i.vc, true)
	var err error
	if i.dc, err = f.DatacenterOrDefault(ctx, d.cfg.Datacenter); err != nil {
		return fmt.Errorf("vmware: datacenter %q: %w", d.cfg.Datacenter, err)
	}
	f.SetDatacenter(i.dc)
	if i.cluster, err = f.ClusterComputeResourceOrDefault(ctx, d.cfg.Cluster); err != nil {
		return fmt.Errorf("vmware: cluster %q: %w", d.cfg.Cluster, err)
	}
	if i.ds, err = f.DatastoreOrDefault(ctx, d.cfg.Datastore); err != nil {
		return fmt.Errorf("vmware: datastore %q: %w", d.cfg.Datastore, err)
	}
	if d.cfg.ResourcePool != "" {
		i.pool, err = f.ResourcePool(ctx, d.cfg.ResourcePool)
	} else {
		i.pool, err = i.cluster.ResourcePool(ctx)
	}
	if err != nil {
		return fmt.Errorf("vmware: resource pool %q: %w", d.cfg.ResourcePool, err)
	}
	if d.cfg.Folder != "" {
		i.folder, err = f.Folder(ctx, d.cfg.Folder)
	} else {
		var folders *object.DatacenterFolders
		if folders, err = i.dc.Folders(ctx); err == nil {
			i.folder = folders.VmFolder
		}
	}
	if err != nil {
		return fmt.Errorf("vmware: folder %q: %w", d.cfg.Folder, err)
	}
	return nil
}

// findVM returns the VM of instance id by its instanceUuid, or nil.
func (i *inv) findVM(ctx context.Context, id string) (*object.VirtualMachine, error) {
	if id == "" {
		return nil, nil
	}
	yes := true
	ref, err := object.NewSearchIndex(i.vc).FindByUuid(ctx, i.dc, id, true, &yes)
	if err != nil {
		return nil, fmt.Errorf("vmware: find VM of instance %s: %w", id, err)
	}
	vm, ok := ref.(*object.VirtualMachine)
	if !ok || vm == nil {
		return nil, nil
	}
	return vm, nil
}

// isNotFound reports whether a vSphere fault means the object is gone
// (a VM deleted between lookup and use).
func isNotFound(err error) bool {
	return err != nil && fault.Is(err, &types.ManagedObjectNotFound{})
}

// isInvalidState reports whether a vSphere fault means the VM's (power)
// state does not allow the operation. fault.Is matches the exact fault
// type, so the power-state subtype is asked for on its own.
func isInvalidState(err error) bool {
	return err != nil && (fault.Is(err, &types.InvalidPowerState{}) || fault.Is(err, &types.InvalidState{}))
}

// logout ends the session, if any.
func (d *Driver) logout(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.inv == nil {
		return nil
	}
	err := d.inv.sm.Logout(ctx)
	d.inv = nil
	return err
}

// finder returns a finder of the session's datacenter.
func (d *Driver) finder(i *inv) *find.Finder {
	f := find.NewFinder(i.vc, true)
	f.SetDatacenter(i.dc)
	return f
}
