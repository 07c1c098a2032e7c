package identity

import (
	"net/http"
)

// The catalog's services, endpoints and regions, read-only: Stratus
// builds its catalog from what the agent serves rather than storing it,
// so `openstack service list`, `endpoint list` and `region list` show
// what tokens carry, and the create/update/delete calls of Keystone's
// catalog API are not served (404, as any unknown path).

// catalogService is one service the agent serves, at its catalog URL.
type catalogService struct {
	typ, name, description, url string
}

// catalogServices lists the services in the order the token catalog
// gives them.
func (s *Service) catalogServices(r *http.Request) []catalogService {
	base := s.base(r)
	return []catalogService{
		{"compute", "nova", "Compute Service", base + "/compute/v2.1"},
		{"image", "glance", "Image Service", base + "/image"},
		{"network", "neutron", "Networking Service", base + "/network"},
		{"volumev3", "cinderv3", "Block Storage Service v3", base + "/volume/v3"},
		{"block-storage", "cinder", "Block Storage Service", base + "/volume/v3"},
		{"identity", "keystone", "Identity Service", base + "/identity/v3"},
	}
}

// catalogInterfaces are the interfaces every service has an endpoint on.
var catalogInterfaces = []string{"public", "internal", "admin"}

func serviceID(typ string) string { return stableID("service", typ) }

func (s *Service) endpointID(typ, iface string) string {
	return stableID("endpoint", typ, iface, s.cfg.Region)
}

// catalog lists the services this agent serves: Nova, Glance and
// Neutron (at their unversioned roots, as their own catalog entries
// are) and Keystone.
func (s *Service) catalog(r *http.Request) []catalogEntry {
	services := s.catalogServices(r)
	out := make([]catalogEntry, 0, len(services))
	for _, svc := range services {
		e := catalogEntry{ID: serviceID(svc.typ), Type: svc.typ, Name: svc.name}
		for _, iface := range catalogInterfaces {
			e.Endpoints = append(e.Endpoints, endpoint{ID: s.endpointID(svc.typ, iface),
				Interface: iface, Region: s.cfg.Region, RegionID: s.cfg.Region, URL: svc.url})
		}
		out = append(out, e)
	}
	return out
}

func (s *Service) serviceView(r *http.Request, svc catalogService) map[string]any {
	id := serviceID(svc.typ)
	return map[string]any{
		"id": id, "type": svc.typ, "name": svc.name, "description": svc.description, "enabled": true,
		"links": selfLink{Self: s.base(r) + "/identity/v3/services/" + id},
	}
}

// serviceList answers GET /v3/services, narrowed by ?type and ?name.
func (s *Service) serviceList(w http.ResponseWriter, r *http.Request) (int, any, error) {
	q := r.URL.Query()
	out := []map[string]any{}
	for _, svc := range s.catalogServices(r) {
		if (q.Has("type") && q.Get("type") != svc.typ) || (q.Has("name") && q.Get("name") != svc.name) {
			continue
		}
		out = append(out, s.serviceView(r, svc))
	}
	return http.StatusOK, map[string]any{"services": out, "links": s.listLinks(r)}, nil
}

// serviceGet answers GET /v3/services/{id}.
func (s *Service) serviceGet(w http.ResponseWriter, r *http.Request) (int, any, error) {
	id := r.PathValue("id")
	for _, svc := range s.catalogServices(r) {
		if serviceID(svc.typ) == id {
			return http.StatusOK, map[string]any{"service": s.serviceView(r, svc)}, nil
		}
	}
	return 0, nil, errNotFound("service", id)
}

func (s *Service) endpointView(r *http.Request, svc catalogService, iface string) map[string]any {
	id := s.endpointID(svc.typ, iface)
	return map[string]any{
		"id": id, "interface": iface, "region": s.cfg.Region, "region_id": s.cfg.Region,
		"service_id": serviceID(svc.typ), "url": svc.url, "enabled": true,
		"links": selfLink{Self: s.base(r) + "/identity/v3/endpoints/" + id},
	}
}

// endpointList answers GET /v3/endpoints, narrowed by ?interface,
// ?service_id and ?region_id as Keystone's.
func (s *Service) endpointList(w http.ResponseWriter, r *http.Request) (int, any, error) {
	q := r.URL.Query()
	if v := q.Get("interface"); q.Has("interface") && v != "public" && v != "internal" && v != "admin" {
		return 0, nil, errBadRequest("Invalid input for field 'interface': %q is not one of ['public', 'internal', 'admin'].", v)
	}
	out := []map[string]any{}
	for _, svc := range s.catalogServices(r) {
		for _, iface := range catalogInterfaces {
			if (q.Has("interface") && q.Get("interface") != iface) ||
				(q.Has("service_id") && q.Get("service_id") != serviceID(svc.typ)) ||
				(q.Has("region_id") && q.Get("region_id") != s.cfg.Region) {
				continue
			}
			out = append(out, s.endpointView(r, svc, iface))
		}
	}
	return http.StatusOK, map[string]any{"endpoints": out, "links": s.listLinks(r)}, nil
}

// endpointGet answers GET /v3/endpoints/{id}.
func (s *Service) endpointGet(w http.ResponseWriter, r *http.Request) (int, any, error) {
	id := r.PathValue("id")
	for _, svc := range s.catalogServices(r) {
		for _, iface := range catalogInterfaces {
			if s.endpointID(svc.typ, iface) == id {
				return http.StatusOK, map[string]any{"endpoint": s.endpointView(r, svc, iface)}, nil
			}
		}
	}
	return 0, nil, errNotFound("endpoint", id)
}

func (s *Service) regionView(r *http.Request) map[string]any {
	return map[string]any{
		"id": s.cfg.Region, "description": "", "parent_region_id": nil,
		"links": selfLink{Self: s.base(r) + "/identity/v3/regions/" + s.cfg.Region},
	}
}

// regionList answers GET /v3/regions: the agent's one region
// (?parent_region_id narrows it away, as the region has no parent).
func (s *Service) regionList(w http.ResponseWriter, r *http.Request) (int, any, error) {
	out := []map[string]any{}
	if !r.URL.Query().Has("parent_region_id") {
		out = append(out, s.regionView(r))
	}
	return http.StatusOK, map[string]any{"regions": out, "links": s.listLinks(r)}, nil
}

// regionGet answers GET /v3/regions/{id}.
func (s *Service) regionGet(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if id := r.PathValue("id"); id != s.cfg.Region {
		return 0, nil, errNotFound("region", id)
	}
	return http.StatusOK, map[string]any{"region": s.regionView(r)}, nil
}
