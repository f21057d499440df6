package store

import (
	"fmt"
	"sort"
	"time"
)

// Target names an entry: by id, or by name with seed 001's resolution.
// Freshness keeps the candidates in that state; "" keeps the fresh and the
// expiring_soon ones (an expired entry is read only when asked for with
// freshness=expired, and not at all after its grace).
type Target struct {
	ID        string
	Name      string
	Freshness string
}

// How an entry was selected (LEGEND selected_by).
const (
	SelectedByID        = "exact_id"
	SelectedByOnly      = "name:only_candidate"
	SelectedByStatus    = "name:finalized_first"
	SelectedByUpdatedAt = "name:latest_updated_at"
	SelectedByRevision  = "name:highest_revision"
)

// Selection says which entry a target selected and why.
type Selection struct {
	SelectedBy       string `json:"selected_by"`
	SelectedRevision int    `json:"selected_revision"`
	SelectedStatus   string `json:"selected_status"`
}

// checkTarget validates a target's fields; need says an id or name is required.
func checkTarget(t Target, action string) error {
	if t.ID == "" && t.Name == "" {
		return invalid(map[string]any{"requested_action": action, "required_fields": []string{"id", "name"}, "mutually_interchangeable": true},
			"%s needs id or name: pass id (pk_…) or name (for example pr-123)", action)
	}
	if t.ID != "" && !ValidID(t.ID) {
		return invalid(map[string]any{"requested_field": "id", "expected_format": "pk_[a-z2-7]{8}"},
			"%s: id must be pk_ followed by 8 of a-z and 2-7", action)
	}
	if t.Name != "" {
		if err := checkName("name", t.Name); err != nil {
			return err
		}
	}
	if t.Freshness != "" && !validFreshness(t.Freshness) {
		return invalid(map[string]any{"requested_field": "freshness", "allowed_values": Freshnesses},
			"%s: freshness must be fresh, expiring_soon or expired", action)
	}
	return nil
}

// resolve finds the entry t names (under the lock). By name, the
// candidates in the freshness asked for are ordered: finalized before the
// rest, then the latest updated_at, then the highest revision; a tie on all
// three fails closed with ambiguous and the tied candidate_ids.
func (s *Store) resolve(t Target, now time.Time) (*Entry, Selection, error) {
	if t.ID != "" {
		e, err := s.load(t.ID)
		if err != nil {
			return nil, Selection{}, err
		}
		if e == nil {
			return nil, Selection{}, notFound(map[string]any{"id": t.ID}, "no pack %s in the store (input list shows what there is)", t.ID)
		}
		if t.Name != "" && e.Name != t.Name {
			return nil, Selection{}, invalid(map[string]any{"requested_fields": []string{"id", "name"}, "id": t.ID, "name": t.Name},
				"%s is not named %s: pass id or name, not both", t.ID, t.Name)
		}
		if err := s.available(e, t.Freshness, now); err != nil {
			return nil, Selection{}, err
		}
		return e, Selection{SelectedBy: SelectedByID, SelectedRevision: e.Revision, SelectedStatus: e.Status}, nil
	}
	all, err := s.all()
	if err != nil {
		return nil, Selection{}, err
	}
	var cands, expired []*Entry
	for _, e := range all {
		if e.Name != t.Name {
			continue
		}
		state, _, gone := s.freshness(e, now)
		if gone {
			continue
		}
		if matches(state, t.Freshness) {
			cands = append(cands, e)
		} else if state == Expired {
			expired = append(expired, e)
		}
	}
	if len(cands) == 0 {
		if len(expired) > 0 {
			return nil, Selection{}, &Error{Kind: KindNotFound, Code: CodeExpired,
				Message: fmt.Sprintf("every pack named %s has expired: pass freshness=expired to read it within the grace window, or extend its ttl", t.Name),
				Details: map[string]any{"name": t.Name, "candidate_ids": ids(expired), "guidance": "pass freshness=expired, or input ttl with extend_minutes"}}
		}
		return nil, Selection{}, notFound(map[string]any{"name": t.Name, "freshness": t.Freshness}, "no pack named %s in the store (input list shows what there is)", t.Name)
	}
	if len(cands) == 1 {
		e := cands[0]
		return e, Selection{SelectedBy: SelectedByOnly, SelectedRevision: e.Revision, SelectedStatus: e.Status}, nil
	}
	by, tier := "", cands
	if fin := filter(tier, func(e *Entry) bool { return e.Status == StatusFinalized }); len(fin) > 0 && len(fin) < len(tier) {
		tier, by = fin, SelectedByStatus
	}
	if len(tier) > 1 {
		latest := tier[0].UpdatedAt
		for _, e := range tier[1:] {
			if e.UpdatedAt.After(latest) {
				latest = e.UpdatedAt
			}
		}
		tier, by = filter(tier, func(e *Entry) bool { return e.UpdatedAt.Equal(latest) }), SelectedByUpdatedAt
	}
	if len(tier) > 1 {
		top := 0
		for _, e := range tier {
			top = max(top, e.Revision)
		}
		tier, by = filter(tier, func(e *Entry) bool { return e.Revision == top }), SelectedByRevision
		if len(tier) > 1 {
			return nil, Selection{}, &Error{Kind: KindValidation, Code: CodeAmbiguous,
				Message: fmt.Sprintf("name %s is ambiguous: %d packs tie on status, updated_at and revision; pass one of their ids", t.Name, len(tier)),
				Details: map[string]any{"name": t.Name, "candidate_ids": ids(tier), "resolution_order": []string{"finalized_first", "latest_updated_at", "highest_revision"}}}
		}
	}
	e := tier[0]
	return e, Selection{SelectedBy: by, SelectedRevision: e.Revision, SelectedStatus: e.Status}, nil
}

// available checks an entry found by id against the freshness asked for.
func (s *Store) available(e *Entry, want string, now time.Time) error {
	state, _, gone := s.freshness(e, now)
	switch {
	case gone:
		return notFound(map[string]any{"id": e.ID, "reason": "expired_past_grace", "expires_at": stamp(e.ExpiresAt)},
			"%s expired at %s and its grace window is over: it is no longer available", e.ID, stamp(e.ExpiresAt))
	case state == Expired && want != Expired:
		return &Error{Kind: KindNotFound, Code: CodeExpired,
			Message: fmt.Sprintf("%s expired at %s: pass freshness=expired to read it within the grace window, or extend its ttl", e.ID, stamp(e.ExpiresAt)),
			Details: map[string]any{"id": e.ID, "freshness_state": state, "expires_at": stamp(e.ExpiresAt), "guidance": "pass freshness=expired, or input ttl with extend_minutes"}}
	case want != "" && state != want:
		return notFound(map[string]any{"id": e.ID, "freshness_state": state, "requested_freshness": want},
			"%s is %s, not %s", e.ID, state, want)
	}
	return nil
}

// matches reports whether state passes the freshness filter (default:
// everything but expired).
func matches(state, want string) bool {
	if want == "" {
		return state != Expired
	}
	return state == want
}

func filter(list []*Entry, keep func(*Entry) bool) []*Entry {
	var out []*Entry
	for _, e := range list {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out
}

func ids(list []*Entry) []string {
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = e.ID
	}
	sort.Strings(out)
	return out
}

// stamp is a time as the store shows it: RFC 3339 UTC.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
