package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/fsutil"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/pack/schema"
	"github.com/ctxpack/ctxpack/transparency"
)

// View is an entry as list, get and write show it, with its freshness.
type View struct {
	ID             string    `json:"id"`
	Name           string    `json:"name,omitempty"`
	Revision       int       `json:"revision"`
	Status         string    `json:"status"`
	CreatedAt      string    `json:"created_at"`
	UpdatedAt      string    `json:"updated_at"`
	ExpiresAt      string    `json:"expires_at"`
	FreshnessState string    `json:"freshness_state"`
	TTLRemaining   int64     `json:"ttl_remaining"` // seconds; 0 once expired
	Warning        string    `json:"warning,omitempty"`
	Pack           *PackInfo `json:"pack,omitempty"`
	Sections       []string  `json:"sections"`
	// Document is the whole document (get and write only).
	Document Document `json:"document,omitempty"`
	// Selection says how a name or id selected the entry (get only).
	Selection *Selection `json:"selection,omitempty"`
}

func (s *Store) view(e *Entry, now time.Time, withDocument bool) *View {
	state, remaining, _ := s.freshness(e, now)
	v := &View{
		ID: e.ID, Name: e.Name, Revision: e.Revision, Status: e.Status,
		CreatedAt: stamp(e.CreatedAt), UpdatedAt: stamp(e.UpdatedAt), ExpiresAt: stamp(e.ExpiresAt),
		FreshnessState: state, TTLRemaining: int64(remaining / time.Second), Pack: e.Pack,
		Sections: e.Document.Keys(),
	}
	switch state {
	case ExpiringSoon:
		v.Warning = fmt.Sprintf("expiring soon: %s left; extend it with input ttl extend_minutes", remaining.Round(time.Second))
	case Expired:
		v.Warning = fmt.Sprintf("expired at %s; readable with freshness=expired until %s, then gone", stamp(e.ExpiresAt), stamp(e.ExpiresAt.Add(s.grace)))
	}
	if withDocument {
		v.Document = e.Document
		if v.Document == nil {
			v.Document = Document{}
		}
	}
	return v
}

// List lists the entries in the freshness asked for ("" = fresh and
// expiring_soon: expired entries are hidden unless asked for), sorted by
// name, then latest updated_at, then id.
func (s *Store) List(ctx context.Context, freshness string) ([]*View, error) {
	if freshness != "" && !validFreshness(freshness) {
		return nil, invalid(map[string]any{"requested_field": "freshness", "allowed_values": Freshnesses},
			"list: freshness must be fresh, expiring_soon or expired")
	}
	var out []*View
	err := s.lock(ctx, false, func() error {
		all, err := s.all()
		if err != nil {
			return err
		}
		now := s.now()
		for _, e := range all {
			state, _, gone := s.freshness(e, now)
			if !gone && matches(state, freshness) {
				out = append(out, s.view(e, now, false))
			}
		}
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		if out[i].UpdatedAt != out[j].UpdatedAt {
			return out[i].UpdatedAt > out[j].UpdatedAt
		}
		return out[i].ID < out[j].ID
	})
	return out, err
}

// Get returns an entry with its document and how it was selected.
func (s *Store) Get(ctx context.Context, t Target) (*View, error) {
	if err := checkTarget(t, "get"); err != nil {
		return nil, err
	}
	var v *View
	err := s.lock(ctx, false, func() error {
		now := s.now()
		e, sel, err := s.resolve(t, now)
		if err != nil {
			return err
		}
		v = s.view(e, now, true)
		v.Selection = &sel
		return nil
	})
	return v, err
}

// Delete deletes an entry (a name must select exactly one).
func (s *Store) Delete(ctx context.Context, t Target) (*View, error) {
	if err := checkTarget(t, "delete"); err != nil {
		return nil, err
	}
	var v *View
	err := s.lock(ctx, true, func() error {
		now := s.now()
		e, sel, err := s.resolve(t, now)
		if err != nil {
			return err
		}
		v = s.view(e, now, false)
		v.Selection = &sel
		return s.remove(e.ID)
	})
	return v, err
}

// TTLInput sets or extends an entry's time to live: exactly one of
// TTLMinutes (from now) and ExtendMinutes (added to expires_at, or to now
// when that has passed).
type TTLInput struct {
	Target
	TTLMinutes    *int
	ExtendMinutes *int
}

// TTL sets or extends an entry's time to live. An expired entry within its
// grace may be given a new life; one past it is gone.
func (s *Store) TTL(ctx context.Context, in TTLInput) (*View, error) {
	t := in.Target
	if err := checkTarget(t, "ttl"); err != nil {
		return nil, err
	}
	if (in.TTLMinutes == nil) == (in.ExtendMinutes == nil) {
		return nil, invalid(map[string]any{"requested_action": "ttl", "required_fields": []string{"ttl_minutes", "extend_minutes"}, "mutually_exclusive": true},
			"ttl accepts exactly one of ttl_minutes (a new ttl from now) and extend_minutes (added to expires_at)")
	}
	field, minutes := "ttl_minutes", in.TTLMinutes
	if minutes == nil {
		field, minutes = "extend_minutes", in.ExtendMinutes
	}
	if *minutes < 1 || time.Duration(*minutes)*time.Minute > MaxTTL {
		return nil, invalid(map[string]any{"requested_field": field, "min": 1, "max": int(MaxTTL / time.Minute)},
			"ttl: %s must be 1 to %d minutes", field, int(MaxTTL/time.Minute))
	}
	var v *View
	err := s.lock(ctx, true, func() error {
		now := s.now()
		var e *Entry
		var err error
		if t.ID != "" {
			if e, err = s.load(t.ID); err == nil && e == nil {
				err = notFound(map[string]any{"id": t.ID}, "no pack %s in the store (input list shows what there is)", t.ID)
			}
			if err == nil {
				if _, _, gone := s.freshness(e, now); gone {
					err = s.available(e, "", now)
				}
			}
		} else {
			// By name, any candidate still within its grace may be extended.
			e, _, err = s.resolve(Target{Name: t.Name, Freshness: t.Freshness}, now)
			var se *Error
			if errors.As(err, &se) && se.Code == CodeExpired && t.Freshness == "" {
				e, _, err = s.resolve(Target{Name: t.Name, Freshness: Expired}, now)
			}
		}
		if err != nil {
			return err
		}
		d := time.Duration(*minutes) * time.Minute
		if in.TTLMinutes != nil {
			e.ExpiresAt = now.Add(d)
		} else {
			base := e.ExpiresAt
			if base.Before(now) {
				base = now
			}
			if base.Add(d).Sub(now) > MaxTTL {
				return invalid(map[string]any{"requested_field": field, "max_ttl_minutes": int(MaxTTL / time.Minute)},
					"ttl: extending by %d minutes would put expires_at more than %d minutes ahead", *minutes, int(MaxTTL/time.Minute))
			}
			e.ExpiresAt = base.Add(d)
		}
		e.ExpiresAt = e.ExpiresAt.UTC()
		if err := s.save(e); err != nil {
			return err
		}
		v = s.view(e, now, false)
		return nil
	})
	return v, err
}

// PutInput is a pack to store.
type PutInput struct {
	// Pack is the canonical pack JSON; Record its transparency record.
	Pack   []byte
	Record []byte
	// Name is the entry's name; "" means DefaultName.
	Name string
}

// PutResult is what Put did.
type PutResult struct {
	View *View `json:"entry"`
	// Stored is false when the same pack was already stored (the entry is
	// returned unchanged).
	Stored bool `json:"stored"`
}

// Put stores a pack with its record under its pack id. The pack must be a
// valid pack whose id matches its content, the record must be its record
// (pack sha256) with a passing verdict, and a fresh secret scan of every
// string must find nothing: the store hands packs to agents, so it checks
// what it is given, fail-closed. Storing the same pack again changes
// nothing.
func (s *Store) Put(ctx context.Context, in PutInput) (*PutResult, error) {
	p, err := s.checkPack(ctx, in)
	if err != nil {
		return nil, err
	}
	name := in.Name
	if name == "" {
		name = DefaultName(p)
	}
	if err := checkName("name", name); err != nil {
		return nil, err
	}
	if err := s.scanStrings(ctx, []textOf{{"name", name}}); err != nil {
		return nil, err
	}
	sum := sha256Hex(in.Pack)
	var res *PutResult
	err = s.lock(ctx, true, func() error {
		now := s.now()
		if err := s.purge(now); err != nil {
			return err
		}
		old, err := s.load(p.PackID)
		if err != nil {
			return err
		}
		if old != nil {
			if old.Pack == nil || old.Pack.SHA256 != sum {
				return fmt.Errorf("store %s: another entry has this id; delete it first", p.PackID)
			}
			res = &PutResult{View: s.view(old, now, false)}
			return nil
		}
		e := &Entry{StoreVersion: Version, ID: p.PackID, Name: name, Revision: 1, Status: StatusDraft,
			CreatedAt: now.UTC(), UpdatedAt: now.UTC(), ExpiresAt: now.Add(s.ttl).UTC(),
			Pack: &PackInfo{PackID: p.PackID, Repository: p.Source.Repository, Trigger: p.Source.Trigger, Head: p.Source.Head,
				Base: p.Source.Base, Ref: p.Source.Ref, Dirty: p.Source.Dirty, SHA256: sum, Verdict: audit.StatusPass},
			Document: Document{},
		}
		e.History = []Revision{{Revision: 1, UpdatedAt: e.UpdatedAt, Status: e.Status, Sections: map[string]string{}}}
		if err := s.create(e, map[string][]byte{packFile: in.Pack, recordFile: in.Record}); err != nil {
			return err
		}
		res = &PutResult{View: s.view(e, now, false), Stored: true}
		return nil
	})
	return res, err
}

// create writes a new entry's directory in a temporary directory and
// renames it into place.
func (s *Store) create(e *Entry, files map[string][]byte) error {
	tmp, err := os.MkdirTemp(filepath.Join(s.dir, packsDir), ".tmp-")
	if err != nil {
		return fmt.Errorf("store %s: %w", e.ID, err)
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("store %s: %w", e.ID, err)
	}
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return fmt.Errorf("encode entry %s: %w", e.ID, err)
	}
	files[entryFile] = append(data, '\n')
	for name, data := range files {
		if err := fsutil.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, s.entryDir(e.ID)); err != nil {
		return fmt.Errorf("store %s: %w", e.ID, err)
	}
	return nil
}

// checkPack checks a pack and its record before they are stored.
func (s *Store) checkPack(ctx context.Context, in PutInput) (*pack.Pack, error) {
	if s.scanner == nil {
		return nil, errors.New("store: no secret scanner: nothing is stored unscanned")
	}
	bad := func(reason, format string, args ...any) error {
		return invalid(map[string]any{"requested_field": "pack", "reason": reason}, "store: "+format, args...)
	}
	if err := schema.ValidatePack(in.Pack); err != nil {
		return nil, bad("schema_invalid", "the pack does not match the pack schema: %v", err)
	}
	p := new(pack.Pack)
	if err := json.Unmarshal(in.Pack, p); err != nil {
		return nil, bad("schema_invalid", "the pack is not a JSON pack: %v", err)
	}
	digest, err := pack.ContentDigest(p)
	if err != nil {
		return nil, fmt.Errorf("store: digest the pack: %w", err)
	}
	if want := pack.ID(digest); p.PackID != want || !ValidID(p.PackID) {
		return nil, bad("pack_id_mismatch", "pack_id %q does not match the pack's content (expected %s): it was edited after it was built", clip(p.PackID, 20), want)
	}
	if canon, err := pack.Marshal(p); err != nil || !bytes.Equal(canon, in.Pack) {
		return nil, bad("not_canonical", "the pack bytes are not in canonical form: it was edited or re-serialized after it was built")
	}
	if len(in.Record) == 0 {
		return nil, invalid(map[string]any{"requested_field": "record", "required_fields": []string{"record"}},
			"store: the pack's transparency record is required (pack.json.record.json, or pack.record.json in an Action artifact)")
	}
	rec, err := transparency.ParseRecord(in.Record)
	if err != nil {
		return nil, invalid(map[string]any{"requested_field": "record", "reason": "invalid"}, "store: the record is not a transparency record: %v", err)
	}
	if err := transparency.CheckPair(rec, in.Pack, p.PackID); err != nil {
		return nil, invalid(map[string]any{"requested_field": "record", "reason": "other_pack", "record_pack_id": clip(rec.PackID, 20), "pack_id": p.PackID},
			"store: the record describes another pack: %v", err)
	}
	if rec.Verdict == nil || rec.Verdict.Status != audit.StatusPass {
		failed := 0
		if rec.Verdict != nil {
			failed = len(rec.Verdict.Failed)
		}
		return nil, invalid(map[string]any{"requested_field": "record", "reason": "verdict_not_pass", "failed_checks": failed},
			"store: the pack's verdict is not pass (%d failed checks): only packs that passed the audit are handed to agents", failed)
	}
	found, failed := audit.PackSecrets(ctx, s.scanner, p)
	if len(failed) > 0 {
		return nil, &Error{Kind: KindInternal, Code: CodeInternal, Message: "store: the secret scan could not run: " + failed[0].Message, Details: map[string]any{"checks": failed}}
	}
	if len(found) > 0 {
		return nil, invalid(map[string]any{"requested_field": "pack", "reason": "secret_detected", "findings": found},
			"store: the pack holds %d unredacted secret(s) (%s): nothing was stored", len(found), found[0].Message)
	}
	return p, nil
}

// scanStrings secret-scans texts as one document; a finding fails with
// invalid_data naming where (JSON pointer, line) and the rule, never the value.
func (s *Store) scanStrings(ctx context.Context, texts []textOf) error {
	if s.scanner == nil {
		return errors.New("store: no secret scanner: nothing is written unscanned")
	}
	var b strings.Builder
	starts := make([]int, len(texts)) // first line of each text
	line := 1
	for i, t := range texts {
		starts[i] = line
		b.WriteString(t.text)
		b.WriteByte('\n')
		line += strings.Count(t.text, "\n") + 1
	}
	findings, err := pack.ScanText(ctx, s.scanner, "document.md", []byte(b.String())) // no file: no allow comment counts
	if err != nil {
		return &Error{Kind: KindInternal, Code: CodeInternal, Message: "write: the secret scan could not run: " + err.Error(), Details: map[string]any{}}
	}
	if len(findings) == 0 {
		return nil
	}
	var rows []map[string]any
	for _, f := range findings {
		i := sort.Search(len(starts), func(i int) bool { return starts[i] > f.StartLine }) - 1
		i = max(i, 0)
		rows = append(rows, map[string]any{"pointer": texts[i].pointer, "line": f.StartLine - starts[i] + 1, "rule_id": f.RuleID})
	}
	return invalid(map[string]any{"reason": "secret_detected", "findings": rows},
		"write: %d secret(s) found (rule %s at %s): remove them and write again; nothing was written", len(rows), findings[0].RuleID, rows[0]["pointer"])
}
