package ec2

// pager is how one Describe* action pages: MaxResults between min and
// max (a larger one is cut to max, as EC2 does for volumes, snapshots
// and tags), not together with the ids parameter idsParam, and
// NextToken the EC2 id of the page's first item. The token is
// stateless, so any agent continues a listing; an item gone since the
// last page makes the token invalid (InvalidNextToken), never a page
// that skips or repeats silently.
type pager struct {
	min, max int
	idsParam string
}

// pageOf cuts the page of items that MaxResults and NextToken ask for,
// and the token of the page after it ("" for the last). key is an
// item's token.
func pageOf[T any](q *request, p pager, items []T, key func(T) string) ([]T, string, error) {
	limit, err := q.intParam("MaxResults", 0)
	if err != nil {
		return nil, "", err
	}
	if limit != 0 && p.idsParam != "" && len(q.list(p.idsParam)) > 0 {
		return nil, "", ec2Error(codeInvalidParameterCombo, "The parameter %s cannot be used with the parameter MaxResults", p.idsParam)
	}
	if limit != 0 && limit < p.min {
		return nil, "", ec2Error(codeInvalidParameterValue, "Value ( %d ) for parameter maxResults is invalid. Expecting a value greater than %d.", limit, p.min-1)
	}
	limit = min(limit, p.max)
	if tok := q.params.Get("NextToken"); tok != "" {
		start := -1
		for i, it := range items {
			if key(it) == tok {
				start = i
				break
			}
		}
		if start < 0 {
			return nil, "", ec2Error(codeInvalidNextToken, "The token '%s' is invalid or its item is gone.", tok)
		}
		items = items[start:]
	}
	if limit == 0 || len(items) <= limit {
		return items, "", nil
	}
	return items[:limit], key(items[limit]), nil
}
