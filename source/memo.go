package source

import (
	"context"
	"slices"
	"strings"
	"sync"
)

// historyMemo keeps the answers of the history questions a run asks more
// than once: the configuration is read at a range's merge base before the
// range is snapshotted, and the pre-push hook lists a push's new commits
// to plan it, to find its diff base and to snapshot it. Between given ids
// the answers cannot change while the repository is open (a fetch
// reopens it, with an empty memo); only answers are kept, never errors.
type historyMemo struct {
	mu      sync.Mutex
	answers map[string][]ObjectID // question → sorted ids
}

// question names one call: its kind and its ids, in order.
func question(kind string, ids ...ObjectID) string {
	var b strings.Builder
	b.WriteString(kind)
	for _, id := range ids {
		b.WriteByte(' ')
		b.WriteString(string(id))
	}
	return b.String()
}

func (m *historyMemo) get(q string) ([]ObjectID, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids, ok := m.answers[q]
	return slices.Clone(ids), ok
}

func (m *historyMemo) put(q string, ids []ObjectID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.answers == nil {
		m.answers = map[string][]ObjectID{}
	}
	m.answers[q] = slices.Clone(ids)
}

func (m *historyMemo) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.answers = nil
}

// mergeBases is the backend's mergeBases of x and y, asked once.
func (r *Repo) mergeBases(ctx context.Context, x, y ObjectID) ([]ObjectID, error) {
	q := question("merge-base", x, y)
	if ids, ok := r.memo.get(q); ok {
		return ids, nil
	}
	ids, err := r.b.mergeBases(ctx, x, y)
	if err != nil {
		return nil, err
	}
	r.memo.put(q, ids)
	return ids, nil
}

// revList is the backend's revList of head without exclude, asked once.
func (r *Repo) revList(ctx context.Context, head ObjectID, exclude []ObjectID) ([]ObjectID, error) {
	q := question("rev-list", append([]ObjectID{head}, exclude...)...)
	if ids, ok := r.memo.get(q); ok {
		return ids, nil
	}
	ids, err := r.b.revList(ctx, head, exclude)
	if err != nil {
		return nil, err
	}
	r.memo.put(q, ids)
	return ids, nil
}
