package nova

import (
	"net/http"
	"regexp"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

const keypairRule = "os_compute_api:os-keypairs:"

func (a *API) keypairRoutes() []route.Route[handler] {
	return []route.Route[handler]{
		{Pattern: "GET /os-keypairs", Access: anyone, Policy: keypairRule + "index", Handle: a.keypairList},
		{Pattern: "POST /os-keypairs", Access: anyone, Policy: keypairRule + "create", Handle: a.keypairCreate},
		{Pattern: "GET /os-keypairs/{name}", Access: anyone, Policy: keypairRule + "show", Handle: a.keypairShow},
		{Pattern: "DELETE /os-keypairs/{name}", Access: anyone, Policy: keypairRule + "delete", Handle: a.keypairDelete},
	}
}

// Key pair name characters: before 2.92, and from 2.92 ('@' and '.').
var (
	keypairName20  = regexp.MustCompile(`^[a-zA-Z0-9 _-]+$`)
	keypairName292 = regexp.MustCompile(`^[a-zA-Z0-9 _@.-]+$`)
)

func keypairNameFormat(pattern *regexp.Regexp) func(string) string {
	return func(s string) string {
		if msg := checkName(s); msg != "" {
			return msg
		}
		if !pattern.MatchString(s) {
			return "An invalid 'name' value was provided. The name must be: Keypair name contains unsafe characters"
		}
		return ""
	}
}

// keypairCreateSchema is Nova's POST /os-keypairs schema: type from 2.2,
// user_id from 2.10, and from 2.92 wider names and an imported key only.
func keypairCreateSchema(mv int) *schema {
	name := &schema{types: tString, minLen: 1, maxLen: 255, format: keypairNameFormat(keypairName20)}
	required := []string{"name"}
	if mv >= 92 {
		name = &schema{types: tString, minLen: 1, maxLen: 255, format: keypairNameFormat(keypairName292)}
		required = append(required, "public_key")
	}
	props := map[string]*schema{"name": name, "public_key": {types: tString}}
	if mv >= 2 {
		props["type"] = &schema{types: tString, enum: []string{"ssh", "x509"}}
	}
	if mv >= 10 {
		props["user_id"] = &schema{types: tString}
	}
	return &schema{types: tObject, required: []string{"keypair"}, props: map[string]*schema{
		"keypair": {types: tObject, props: props, required: required},
	}}
}

// keypairUser is whose key pairs a request is about: the caller's, or
// from 2.10 the user_id an admin names (a member naming another user
// fails the policy, as Nova's owner rule does).
func (q *request) keypairUser(requested, rule string) (string, error) {
	if requested == "" || !q.atLeast(10) || requested == q.token.UserID {
		return q.token.UserID, nil
	}
	if !q.isAdmin() {
		return "", policyFault(keypairRule + rule)
	}
	return requested, nil
}

// keypairView is a key pair in Nova's body; show adds the record fields.
func (q *request) keypairView(kp *structs.KeyPair, show bool) map[string]any {
	v := map[string]any{"name": kp.Name, "public_key": kp.PublicKey, "fingerprint": kp.Fingerprint}
	if q.atLeast(2) {
		v["type"] = kp.Type
	}
	if show {
		v["user_id"] = kp.UserID
		v["deleted"] = false
		v["created_at"] = pyTime(kp.CreatedAt)
		v["updated_at"] = nil
		v["deleted_at"] = nil
		v["id"] = kp.CreateIndex
	}
	return v
}

// keypairList answers GET /os-keypairs (paginated by name from 2.35).
func (a *API) keypairList(q *request) (*reply, error) {
	allowed := []string{"user_id"}
	if q.atLeast(35) {
		allowed = append(allowed, "limit", "marker")
	}
	if err := q.checkQuery(allowed...); err != nil {
		return nil, err
	}
	user, err := q.keypairUser(q.query().Get("user_id"), "index")
	if err != nil {
		return nil, err
	}
	var out structs.KeyPairListResponse
	if err := q.call("KeyPair.List", &structs.KeyPairListRequest{UserID: user}, &out); err != nil {
		return nil, err
	}
	kps := out.KeyPairs
	var next []link
	if q.atLeast(35) {
		pg, err := q.parsePage()
		if err != nil {
			return nil, err
		}
		if kps, err = paginate(kps, pg, func(kp *structs.KeyPair) string { return kp.Name }); err != nil {
			return nil, err
		}
		if len(kps) > 0 {
			next = q.nextLinks(pg, len(kps), kps[len(kps)-1].Name, "os-keypairs")
		}
	}
	items := make([]any, 0, len(kps))
	for _, kp := range kps {
		items = append(items, map[string]any{"keypair": q.keypairView(kp, false)})
	}
	body := map[string]any{"keypairs": items}
	if next != nil {
		body["keypairs_links"] = next
	}
	return okReply(body)
}

func (a *API) keypairShow(q *request) (*reply, error) {
	user, err := q.keypairUser(q.query().Get("user_id"), "show")
	if err != nil {
		return nil, err
	}
	name := q.param("name")
	var out structs.SingleKeyPairResponse
	if err := q.call("KeyPair.Get", &structs.KeyPairSpecificRequest{UserID: user, Name: name}, &out); err != nil {
		return nil, notFoundAs(err, "Keypair %s not found for user %s", name, user)
	}
	return okReply(map[string]any{"keypair": q.keypairView(out.KeyPair, true)})
}

// keypairCreate answers POST /os-keypairs: an imported public key, or
// (before 2.92) a generated key pair whose private key is returned once.
// Over the user's key_pairs quota the servers refuse it (Nova's 403).
func (a *API) keypairCreate(q *request) (*reply, error) {
	body, err := decodeBody(q, keypairCreateSchema(q.mv))
	if err != nil {
		return nil, err
	}
	in := object(body, "keypair")
	requested, _ := stringOf(in, "user_id")
	user, err := q.keypairUser(requested, "create")
	if err != nil {
		return nil, err
	}
	kp := &structs.KeyPair{UserID: user, Type: "ssh"}
	kp.Name, _ = stringOf(in, "name")
	if t, ok := stringOf(in, "type"); ok {
		kp.Type = t
	}
	var private string
	if pub, ok := stringOf(in, "public_key"); ok {
		kp.PublicKey = pub
		if kp.Fingerprint, err = fingerprint(kp.Type, pub); err != nil {
			return nil, err
		}
	} else if private, kp.PublicKey, kp.Fingerprint, err = generateKey(kp.Type, user, q.token.ProjectID); err != nil {
		return nil, err
	}
	var out structs.SingleKeyPairResponse
	if err := q.call("KeyPair.Create", &structs.KeyPairCreateRequest{KeyPair: kp}, &out); err != nil {
		if structs.KindOf(err) == structs.KindConflict {
			return nil, faultf(http.StatusConflict, "Key pair '%s' already exists.", kp.Name)
		}
		return nil, err
	}
	v := q.keypairView(out.KeyPair, false)
	v["user_id"] = out.KeyPair.UserID
	if private != "" {
		v["private_key"] = private
	}
	status := http.StatusOK
	if q.atLeast(2) {
		status = http.StatusCreated
	}
	return &reply{status: status, body: map[string]any{"keypair": v}}, nil
}

// keypairDelete answers DELETE /os-keypairs/{name}: 202 before 2.2, 204
// from it.
func (a *API) keypairDelete(q *request) (*reply, error) {
	user, err := q.keypairUser(q.query().Get("user_id"), "delete")
	if err != nil {
		return nil, err
	}
	name := q.param("name")
	if err := q.call("KeyPair.Delete", &structs.KeyPairDeleteRequest{UserID: user, Names: []string{name}}, &structs.GenericResponse{}); err != nil {
		return nil, notFoundAs(err, "Keypair %s not found for user %s", name, user)
	}
	if q.atLeast(2) {
		return noContent()
	}
	return acceptedReply(nil)
}
