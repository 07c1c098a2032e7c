package server

import (
	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// The checks of the S3 store's methods and of the data streams
// (rpc.TypeStream), named by the rule table (rpc_policy.go). The stream
// hook runs them on the stream's request frame, before its handler.

// checkS3Bucket: a non-admin reads its project's buckets (and their
// objects) only; another project's bucket is S3's AccessDenied. An
// unknown bucket passes (the endpoint answers NoSuchBucket).
func checkS3Bucket(s *Server, c *rpcCredential, args any) error {
	var name string
	switch req := args.(type) {
	case *structs.S3BucketGetRequest:
		name = req.Name
	case *structs.S3ObjectGetRequest:
		name = req.Bucket
	default:
		return accessDenied()
	}
	b, err := s.fsm.State().S3BucketByName(nil, name)
	if err != nil || b == nil {
		return err
	}
	if b.ProjectID != c.subject.ProjectID {
		return accessDenied()
	}
	return nil
}

// checkBlobGet: a non-admin reads the data of an image its project may
// see, or of an object (or part) in one of its project's buckets.
func checkBlobGet(s *Server, c *rpcCredential, args any) error {
	req, ok := args.(*structs.BlobGetRequest)
	if !ok {
		return errBlobRefused("")
	}
	state := s.fsm.State()
	project := c.subject.ProjectID
	images, err := state.ImagesByHash(nil, req.HashValue)
	if err != nil {
		return err
	}
	for _, img := range images {
		member, err := state.ImageMemberByID(nil, img.ID, project)
		if err != nil {
			return err
		}
		if img.VisibleTo(structs.ImageAccess{ProjectID: project}, member) {
			return nil
		}
	}
	if ok, err := projectHoldsBlob(state, project, req.HashValue); ok || err != nil {
		return err
	}
	return errBlobRefused(req.HashValue)
}

// projectHoldsBlob reports whether an object or part of a bucket of
// project has the blob.
func projectHoldsBlob(state *fsm.StateStore, project, hash string) (bool, error) {
	objs, err := state.S3ObjectsByHash(nil, hash)
	if err != nil {
		return false, err
	}
	for _, o := range objs {
		b, err := state.S3BucketByName(nil, o.Bucket)
		if err != nil {
			return false, err
		}
		if b != nil && b.ProjectID == project {
			return true, nil
		}
	}
	return false, nil
}

// errBlobRefused answers, alike, data the caller may not read and data
// no record names.
func errBlobRefused(hash string) error {
	if len(hash) > 16 {
		hash = hash[:16]
	}
	return structs.Errorf(structs.KindNotFound, "image data %s not found", hash)
}

// checkBlobPut: a non-admin uploads the data of its project's images.
// An unknown image passes (the upload answers not found).
func checkBlobPut(s *Server, c *rpcCredential, args any) error {
	req, ok := args.(*structs.BlobPutRequest)
	if !ok {
		return structs.Errorf(structs.KindPermission, "Blob.Put needs an image")
	}
	img, err := s.fsm.State().ImageByID(nil, req.ImageID)
	if err != nil || img == nil {
		return err
	}
	if !img.ModifiableBy(structs.ImageAccess{ProjectID: c.subject.ProjectID}) {
		return structs.Errorf(structs.KindPermission, "image %s belongs to another project", req.ImageID)
	}
	return nil
}

// nodeBlobPut: an agent uploads the data of snapshots and backups of
// instances on its hosts, and of the images its hosts' volumes upload
// to.
func nodeBlobPut(s *Server, hosts map[string]bool, args any) error {
	req, ok := args.(*structs.BlobPutRequest)
	if !ok {
		return structs.Errorf(structs.KindPermission, "Blob.Put needs an image")
	}
	return nodeImageDelete(s, hosts, &structs.ImageDeleteRequest{ImageID: req.ImageID})
}

// nodeBlobGet: an agent reads the data of public and community images,
// of the images of instances on its hosts (their image, a rescue image,
// their snapshots: unshelve boots one) and of images pre-cached on its
// hosts' aggregates.
func nodeBlobGet(s *Server, hosts map[string]bool, args any) error {
	req, ok := args.(*structs.BlobGetRequest)
	if !ok {
		return errBlobRefused("")
	}
	state := s.fsm.State()
	images, err := state.ImagesByHash(nil, req.HashValue)
	if err != nil {
		return err
	}
	var wanted map[string]bool
	for _, img := range images {
		if img.Visibility == structs.ImagePublic || img.Visibility == structs.ImageCommunity {
			return nil
		}
		if wanted == nil {
			if wanted, err = nodeImages(state, hosts); err != nil {
				return err
			}
		}
		if wanted[img.ID] {
			return nil
		}
		if id := img.Properties[structs.ImagePropInstanceID]; id != "" && s.nodeOwnsInstance(hosts, id) == nil {
			if inst, err := state.InstanceByID(nil, id); err == nil && inst != nil {
				return nil
			}
		}
	}
	return errBlobRefused(req.HashValue)
}

// nodeImages are the ids of the images an agent's hosts use: those of
// the instances and allocations on them, rescue images, and the images
// pre-cached on their aggregates.
func nodeImages(state *fsm.StateStore, hosts map[string]bool) (map[string]bool, error) {
	out := map[string]bool{}
	aggs := map[int64]bool{}
	for id := range hosts {
		insts, err := state.InstancesByHost(nil, id)
		if err != nil {
			return nil, err
		}
		for _, inst := range insts {
			out[inst.ImageID] = true
		}
		allocs, err := state.AllocationsByHost(nil, id)
		if err != nil {
			return nil, err
		}
		for _, a := range allocs {
			if a.PendingAction == structs.ActionRescue && a.ActionArg != "" {
				out[a.ActionArg] = true
			}
			if inst, err := state.InstanceByID(nil, a.InstanceID); err == nil && inst != nil {
				out[inst.ImageID] = true
			}
		}
		groups, err := state.AggregatesByHost(nil, id)
		if err != nil {
			return nil, err
		}
		for _, g := range groups {
			aggs[g.ID] = true
		}
		// A storage host builds volumes from images of any visibility
		// the volume's project may use (a private image uploaded from
		// another volume, say).
		vols, err := state.VolumesByHost(nil, id)
		if err != nil {
			return nil, err
		}
		for _, v := range vols {
			if v.Status == structs.VolumeCreating && v.ImageID != "" {
				out[v.ImageID] = true
			}
		}
	}
	if len(aggs) > 0 {
		reqs, err := state.ImageCacheRequests(nil)
		if err != nil {
			return nil, err
		}
		for _, r := range reqs {
			if aggs[r.AggregateID] {
				out[r.ImageID] = true
			}
		}
	}
	return out, nil
}

// exchangeable reports whether a token may be exchanged for another
// (Identity.IssueToken, method token): a user's, not an S3 or EC2
// request's, a server's credential or a node introduction, whose uses
// are bounded, nor an application credential's, whose roles are a
// subset of its user's (Keystone does not rescope them either).
func exchangeable(c *structs.TokenClaims) bool {
	if c.AppCredID != "" {
		return false
	}
	for _, m := range c.Methods {
		if m == structs.S3TokenMethod || m == structs.EC2TokenMethod || m == serverTokenMethod || m == structs.NodeIntroMethod {
			return false
		}
	}
	return true
}
