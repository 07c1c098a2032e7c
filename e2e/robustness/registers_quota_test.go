package robustness

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// readQuota reads one of a project's quota limits through the Nova API
// of the agent at base ("" until the workload first writes it: the
// default a project starts with is not a value of the history).
func readQuota(base string, reg register) (string, error) {
	req, err := http.NewRequest(http.MethodGet, base+"/compute/v2.1/os-quota-sets/"+url.PathEscape(reg.project), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("X-Auth-Token", adminToken)
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("read quotas: %s", resp.Status)
	}
	var body struct {
		QuotaSet map[string]json.Number `json:"quota_set"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return "", fmt.Errorf("read quotas: %w", err)
	}
	v, ok := body.QuotaSet[reg.item]
	if !ok {
		return "", fmt.Errorf("read quotas: no %s in the answer", reg.item)
	}
	if n, err := v.Int64(); err == nil && n < 1000 {
		return "", nil // a default: the workload writes 1001 and up
	}
	return v.String(), nil
}
