package api

import (
	"net/http"
	"net/url"
)

// Flavors manages flavors, the hardware templates of instances.
type Flavors struct{ c *Client }

// Flavors returns a handle on the /v1/flavors endpoints.
func (c *Client) Flavors() *Flavors { return &Flavors{c} }

// Flavor is a hardware template for instances, as Nova's flavors are.
type Flavor struct {
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
	// ExtraSpecs are free-form key/values read by the scheduler.
	ExtraSpecs map[string]string

	CreateIndex uint64
	ModifyIndex uint64
}

// List returns all flavors.
func (f *Flavors) List(q *QueryOptions) ([]*Flavor, *QueryMeta, error) {
	var out []*Flavor
	qm, err := f.c.query("/v1/flavors", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Info returns the flavor with the given id or name.
func (f *Flavors) Info(idOrName string, q *QueryOptions) (*Flavor, *QueryMeta, error) {
	var out Flavor
	qm, err := f.c.query("/v1/flavors/"+url.PathEscape(idOrName), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// Create stores a new flavor and returns it as stored.
func (f *Flavors) Create(flavor *Flavor) (*Flavor, *WriteMeta, error) {
	var out Flavor
	wm, err := f.c.write(http.MethodPost, "/v1/flavors", nil, flavor, &out)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// Delete deletes the flavor with the given id.
func (f *Flavors) Delete(id string) (*WriteMeta, error) {
	return f.c.delete("/v1/flavors/"+url.PathEscape(id), nil)
}
