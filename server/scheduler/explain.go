package scheduler

import (
	"sort"
	"strconv"
	"strings"
)

// reasonCounts counts rejections by reason during one placement. There
// are few distinct reasons, so a linear scan beats a map; reasons are
// usually the same precomputed strings, which compare in O(1).
type reasonCounts struct {
	reasons []string
	counts  []int
}

func (rc *reasonCounts) reset() {
	rc.reasons, rc.counts = rc.reasons[:0], rc.counts[:0]
}

func (rc *reasonCounts) add(reason string) {
	for i, r := range rc.reasons {
		if r == reason {
			rc.counts[i]++
			return
		}
	}
	rc.reasons = append(rc.reasons, reason)
	rc.counts = append(rc.counts, 1)
}

func (rc *reasonCounts) toMap() map[string]int {
	m := make(map[string]int, len(rc.reasons))
	for i, r := range rc.reasons {
		m[r] += rc.counts[i]
	}
	return m
}

// Explanation renders Nova's NoValidHost explanation for an instance no
// host could take: "0/120 hosts: 80 insufficient MEMORY_MB, 40 not in
// zone az2" — the hosts evaluated, then each rejection reason with the
// number of hosts it rejected, by count descending then reason. With no
// hosts at all it reads "0/0 hosts: no hosts registered".
func Explanation(hostsEvaluated int, filtered map[string]int) string {
	var b strings.Builder
	b.WriteString("0/")
	b.WriteString(strconv.Itoa(hostsEvaluated))
	b.WriteString(" hosts: ")
	if hostsEvaluated == 0 {
		b.WriteString("no hosts registered")
		return b.String()
	}
	reasons := make([]string, 0, len(filtered))
	for r := range filtered {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool {
		ci, cj := filtered[reasons[i]], filtered[reasons[j]]
		if ci != cj {
			return ci > cj
		}
		return reasons[i] < reasons[j]
	})
	for i, r := range reasons {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(filtered[r]))
		b.WriteByte(' ')
		b.WriteString(r)
	}
	return b.String()
}
