package glance

import (
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

func memberView(m *structs.ImageMember) map[string]any {
	return map[string]any{"image_id": m.ImageID, "member_id": m.MemberID, "status": m.Status,
		"created_at": isoTime(m.CreatedAt), "updated_at": isoTime(m.UpdatedAt), "schema": "/v2/schemas/member"}
}

// sharedImage reads an image the caller may see and checks it can have
// members.
func (q *request) sharedImage() (*structs.Image, *structs.ImageMember, error) {
	img, member, err := q.visibleImage(q.param("id"))
	if err != nil {
		return nil, nil, err
	}
	if img.Visibility != structs.ImageShared {
		return nil, nil, errorf(http.StatusForbidden, "Only shared images have members.")
	}
	return img, member, nil
}

// memberList answers GET /v2/images/{id}/members: every member for the
// owner and admins, its own membership for a member.
func (a *API) memberList(q *request) error {
	img, member, err := q.sharedImage()
	if err != nil {
		return err
	}
	views := []map[string]any{}
	if img.ModifiableBy(q.access()) {
		var resp structs.ImageMemberListResponse
		if err := q.call("Image.MemberList", &structs.ImageMemberListRequest{ImageID: img.ID}, &resp); err != nil {
			return err
		}
		for _, m := range resp.Members {
			views = append(views, memberView(m))
		}
	} else if member != nil {
		views = append(views, memberView(member))
	}
	return q.json(http.StatusOK, map[string]any{"members": views, "schema": "/v2/schemas/members"})
}

// memberCreate answers POST /v2/images/{id}/members {"member": project}:
// the owner shares the image; the membership starts pending.
func (a *API) memberCreate(q *request) error {
	if err := q.requireJSON(); err != nil {
		return err
	}
	img, _, err := q.sharedImage()
	if err != nil {
		return err
	}
	if !q.isMember() || !img.ModifiableBy(q.access()) {
		return notAuthorized("add_member")
	}
	var body map[string]any
	if err := q.decodeJSON(&body); err != nil {
		return err
	}
	project, ok := body["member"].(string)
	if !ok || project == "" {
		return errorf(http.StatusBadRequest, "Member to be added not specified")
	}
	if len(body) != 1 {
		return errorf(http.StatusBadRequest, "Provided object does not match schema 'member': only 'member' may be given")
	}
	var resp structs.SingleImageMemberResponse
	err = q.call("Image.Member", &structs.ImageMemberRequest{Entry: &structs.ImageMemberEntry{Create: true,
		Member: &structs.ImageMember{ImageID: img.ID, MemberID: project}}}, &resp)
	if err != nil {
		return err
	}
	return q.json(http.StatusOK, memberView(resp.Member))
}

// memberOf reads the membership the URL names, if the caller may see it:
// the owner and admins see every one, a member its own.
func (q *request) memberOf(img *structs.Image, mine *structs.ImageMember) (*structs.ImageMember, error) {
	id := q.param("member")
	notFound := errorf(http.StatusNotFound, "%s is not a member of image %s", id, img.ID)
	if !img.ModifiableBy(q.access()) {
		if mine == nil || mine.MemberID != id {
			return nil, notFound
		}
		return mine, nil
	}
	var resp structs.ImageMemberListResponse
	if err := q.call("Image.MemberList", &structs.ImageMemberListRequest{ImageID: img.ID}, &resp); err != nil {
		return nil, err
	}
	for _, m := range resp.Members {
		if m.MemberID == id {
			return m, nil
		}
	}
	return nil, notFound
}

// memberShow answers GET /v2/images/{id}/members/{member}.
func (a *API) memberShow(q *request) error {
	img, mine, err := q.sharedImage()
	if err != nil {
		return err
	}
	m, err := q.memberOf(img, mine)
	if err != nil {
		return err
	}
	return q.json(http.StatusOK, memberView(m))
}

// memberUpdate answers PUT /v2/images/{id}/members/{member}
// {"status": …}: only the member itself (or an admin) accepts or
// rejects a share.
func (a *API) memberUpdate(q *request) error {
	if err := q.requireJSON(); err != nil {
		return err
	}
	img, mine, err := q.sharedImage()
	if err != nil {
		return err
	}
	m, err := q.memberOf(img, mine)
	if err != nil {
		return err
	}
	if m.MemberID != q.token.ProjectID && !q.isAdmin() {
		return errorf(http.StatusForbidden, "You are not permitted to modify 'status' on this image member.")
	}
	var body map[string]any
	if err := q.decodeJSON(&body); err != nil {
		return err
	}
	status, ok := body["status"].(string)
	if !ok {
		return errorf(http.StatusBadRequest, "Status not specified")
	}
	var resp structs.SingleImageMemberResponse
	err = q.call("Image.Member", &structs.ImageMemberRequest{Entry: &structs.ImageMemberEntry{
		Member: &structs.ImageMember{ImageID: img.ID, MemberID: m.MemberID, Status: status}}}, &resp)
	if err != nil {
		return err
	}
	return q.json(http.StatusOK, memberView(resp.Member))
}

// memberDelete answers DELETE /v2/images/{id}/members/{member}: the
// owner stops sharing; 204.
func (a *API) memberDelete(q *request) error {
	img, mine, err := q.sharedImage()
	if err != nil {
		return err
	}
	m, err := q.memberOf(img, mine)
	if err != nil {
		return err
	}
	if !q.isMember() || !img.ModifiableBy(q.access()) {
		return notAuthorized("delete_member")
	}
	var resp structs.SingleImageMemberResponse
	err = q.call("Image.Member", &structs.ImageMemberRequest{Entry: &structs.ImageMemberEntry{Delete: true,
		Member: &structs.ImageMember{ImageID: img.ID, MemberID: m.MemberID}}}, &resp)
	if err != nil {
		return err
	}
	return q.noContent()
}
