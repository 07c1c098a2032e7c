package metadata

import (
	"errors"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/stratus-cloud/stratus/client/instancedata"
	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/policy"
)

// call is one request as the handlers see it.
type call struct {
	w      http.ResponseWriter
	r      *http.Request
	params route.Params
}

// handler answers one routed request.
type handler func(*call) error

// instanceHandler answers a request for the instance it comes from.
type instanceHandler func(*call, *instancedata.InstanceData) error

// The metadata service takes no token: a guest is who its request says
// it is by where it comes from.
const (
	// anyone may list the versions (Nova's metadata root).
	anyone = policy.Public
	// identified routes answer only the instance the request is found
	// to come from (forInstance): by its source address, the fixed IP of
	// a port of an instance on this agent's hosts, or by a metadata
	// proxy's X-Instance-ID signed with the shared secret. An instance
	// never reads another's data; an address that is no instance's gets
	// a 404.
	identified = policy.Authenticated
)

// routes is every path of the service. Everything answers GET (and so
// HEAD); only an OpenStack version's password takes a POST.
func (s *Service) routes() []route.Route[handler] {
	return []route.Route[handler]{
		{Pattern: "GET /", Access: anyone, Handle: versions(instancedata.EC2Versions)},

		// The OpenStack format.
		{Pattern: "GET /openstack", Access: identified, Handle: s.forInstance(func(q *call, _ *instancedata.InstanceData) error {
			return versions(instancedata.OpenStackVersions)(q)
		})},
		{Pattern: "GET /openstack/{version}", Access: identified, Handle: s.forInstance(s.openStackListing)},
		{Pattern: "GET /openstack/{version}/{file}", Access: identified, Handle: s.forInstance(s.openStackFile)},
		{Pattern: "POST /openstack/{version}/password", Access: identified, Handle: s.forInstance(s.openStackFile)},
		{Pattern: "GET /openstack/{version}/{file}/{rest...}", Access: identified, Handle: s.forInstance(notFound)},

		// The EC2 format.
		{Pattern: "GET /{version}", Access: identified, Handle: s.forInstance(s.ec2)},
		{Pattern: "GET /{version}/{path...}", Access: identified, Handle: s.forInstance(s.ec2)},
	}
}

// ServeHTTP answers one request: the version list to anyone, everything
// else to the instance the request comes from.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := path.Clean("/" + r.URL.Path)
	m, err := s.table.Match(route.Request{Method: r.Method, Path: segments(p), Ctx: r.Context()})
	if err != nil {
		// Nova's metadata service answers GET and HEAD (and a password's
		// POST), whatever the path.
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "The server could not comply with the request since it is either malformed or otherwise incorrect.")
		return
	}
	err = m.Route.Handle(&call{w: w, r: r, params: m.Params})
	if err != nil {
		var he *httpError
		if errors.As(err, &he) {
			writeError(w, he.status, he.msg)
			return
		}
		s.logger.Error("metadata request failed", "path", p, "error", err)
		writeError(w, http.StatusInternalServerError, "An unknown error has occurred. Please try your request again.")
	}
}

// segments are a cleaned, unescaped path's segments, escaped for the
// table, which unescapes its parameters again.
func segments(p string) []string {
	segs := route.Split(p)
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	return segs
}

// forInstance identifies the instance a request comes from before h
// answers it.
func (s *Service) forInstance(h instanceHandler) handler {
	return func(q *call) error {
		d, err := s.identify(q.r)
		if err != nil {
			return err
		}
		return h(q, d)
	}
}

// versions answers a version list, "latest" last.
func versions(list []string) handler {
	return func(q *call) error {
		writeText(q.w, strings.Join(append(append([]string(nil), list...), "latest"), "\n"), "text/plain")
		return nil
	}
}

func notFound(*call, *instancedata.InstanceData) error { return errNotFound }

// ec2 serves /<version>/… of instance d.
func (s *Service) ec2(q *call, d *instancedata.InstanceData) error {
	var rest []string
	if p := q.params.Get("path"); p != "" {
		rest = strings.Split(p, "/")
	}
	out, ok := d.EC2(q.params.Get("version"), rest)
	if !ok {
		return errNotFound
	}
	writeText(q.w, out, "text/plain")
	return nil
}

// openStackListing serves /openstack/<version>: the files it has.
func (s *Service) openStackListing(q *call, d *instancedata.InstanceData) error {
	listing, ok := d.OpenStackListing(q.params.Get("version"))
	if !ok {
		return errNotFound
	}
	writeText(q.w, strings.Join(listing, "\n"), "text/plain")
	return nil
}

// openStackFile serves /openstack/<version>/<file> of instance d, the
// password (GET and POST) of the versions that have one included.
func (s *Service) openStackFile(q *call, d *instancedata.InstanceData) error {
	version, file := q.params.Get("version"), q.params.Get("file")
	if file == "" { // POST …/password
		file = instancedata.PasswordFile
	}
	if _, ok := d.OpenStackListing(version); !ok {
		return errNotFound
	}
	if file == instancedata.PasswordFile && instancedata.HasPassword(version) {
		return s.password(q.w, q.r, d)
	}
	b, ok, err := d.OpenStackFile(version, file)
	if err != nil {
		return err
	}
	if !ok {
		return errNotFound
	}
	ctype := "text/plain"
	if strings.HasSuffix(file, ".json") {
		ctype = "application/json"
	}
	writeText(q.w, string(b), ctype)
	return nil
}
