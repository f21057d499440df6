package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// WriteInput is seed 001's input write: a document-only, full-replace
// snapshot. An update names the entry (ID or Name) and the revision it
// was based on (ExpectedRevision); a create gives neither an id nor an
// expected revision (Name then names the new entry) and gets a new id.
type WriteInput struct {
	ID   string
	Name string
	// ExpectedRevision is required for an update, refused for a create.
	ExpectedRevision *int
	// Document is the whole new document (JSON object of sections).
	Document json.RawMessage
	// Status is draft or finalized; "" keeps the entry's status (draft for
	// a create). Finalizing, and writing a finalized entry, runs the
	// finalize checklist.
	Status string
	// ValidateOnly runs every check and persists nothing.
	ValidateOnly bool
}

// WriteResult is what a write did (or, with validate_only, would do).
type WriteResult struct {
	View    *View `json:"entry"`
	Created bool  `json:"created"`
	// Persisted is false with validate_only.
	Persisted    bool `json:"persisted"`
	ValidateOnly bool `json:"validate_only"`
	// ChangedSectionKeys are the sections this write changes.
	ChangedSectionKeys []string `json:"changed_section_keys"`
}

// Write validates and stores a document. Checks run in this order, each
// failing closed: the arguments, the document's shape, the secret scan,
// then under the lock the revision (revision_conflict with the sections
// changed since the expected revision) and, when the result is finalized,
// the finalize checklist (finalize_validation).
func (s *Store) Write(ctx context.Context, in WriteInput) (*WriteResult, error) {
	create := in.ID == "" && in.ExpectedRevision == nil
	switch {
	case in.ID != "" && in.ExpectedRevision == nil:
		return nil, invalid(map[string]any{"requested_action": "write", "required_fields": []string{"expected_revision"}},
			"write: an update of %s needs expected_revision (input get shows the current revision); a create omits both id and expected_revision", in.ID)
	case !create && in.ID == "" && in.Name == "":
		return nil, invalid(map[string]any{"requested_action": "write", "required_fields": []string{"id", "name"}, "mutually_interchangeable": true},
			"write: an update needs id or name with expected_revision")
	case in.ExpectedRevision != nil && *in.ExpectedRevision < 1:
		return nil, invalid(map[string]any{"requested_field": "expected_revision", "min": 1}, "write: expected_revision must be 1 or more")
	}
	if in.ID != "" && !ValidID(in.ID) {
		return nil, invalid(map[string]any{"requested_field": "id", "expected_format": "pk_[a-z2-7]{8}"}, "write: id must be pk_ followed by 8 of a-z and 2-7")
	}
	if in.Name != "" {
		if err := checkName("name", in.Name); err != nil {
			return nil, err
		}
	}
	switch in.Status {
	case "", StatusDraft, StatusFinalized:
	default:
		return nil, invalid(map[string]any{"requested_field": "status", "allowed_values": []string{StatusDraft, StatusFinalized}},
			"write: status must be draft or finalized")
	}
	doc, err := ParseDocument(in.Document)
	if err != nil {
		return nil, err
	}
	texts := doc.strings()
	if in.Name != "" {
		texts = append(texts, textOf{"name", in.Name})
	}
	if err := s.scanStrings(ctx, texts); err != nil {
		return nil, err
	}

	var res *WriteResult
	err = s.lock(ctx, !in.ValidateOnly, func() error {
		now := s.now()
		var e *Entry
		if create {
			if !in.ValidateOnly {
				if err := s.purge(now); err != nil {
					return err
				}
			}
			id, err := s.newID()
			if err != nil {
				return err
			}
			e = &Entry{StoreVersion: Version, ID: id, Name: in.Name, Status: StatusDraft,
				CreatedAt: now.UTC(), ExpiresAt: now.Add(s.ttl).UTC(), Document: Document{}}
		} else {
			var err error
			if e, _, err = s.resolve(Target{ID: in.ID, Name: in.Name}, now); err != nil {
				return err
			}
			if *in.ExpectedRevision != e.Revision {
				return s.conflict(e, *in.ExpectedRevision)
			}
		}
		status := in.Status
		if status == "" {
			status = e.Status
		}
		if status == StatusFinalized {
			if err := s.finalizeCheck(ctx, e, doc); err != nil {
				return err
			}
		}
		changed := changedKeys(e.Document.sectionDigests(), doc.sectionDigests())
		next := *e
		next.Document = doc
		next.Status = status
		next.Revision = e.Revision + 1
		next.UpdatedAt = now.UTC()
		next.History = append(append([]Revision(nil), e.History...), Revision{Revision: next.Revision, UpdatedAt: next.UpdatedAt, Status: status, Sections: doc.sectionDigests()})
		if len(next.History) > maxHistory {
			next.History = next.History[len(next.History)-maxHistory:]
		}
		res = &WriteResult{Created: create, ValidateOnly: in.ValidateOnly, ChangedSectionKeys: changed}
		if in.ValidateOnly {
			res.View = s.view(&next, now, true)
			return nil
		}
		var err error
		if create {
			err = s.create(&next, map[string][]byte{})
		} else {
			err = s.save(&next)
		}
		if err != nil {
			return err
		}
		res.Persisted = true
		res.View = s.view(&next, now, true)
		return nil
	})
	return res, err
}

// conflict is revision_conflict with the sections changed since the
// expected revision (all sections when that revision is not in the history).
func (s *Store) conflict(e *Entry, expected int) error {
	var before map[string]string
	known := false
	for _, r := range e.History {
		if r.Revision == expected {
			before, known = r.Sections, true
		}
	}
	current := e.Document.sectionDigests()
	var changed []string
	if known {
		changed = changedKeys(before, current)
	} else {
		changed = e.Document.Keys()
	}
	details := map[string]any{
		"expected_revision":    expected,
		"current_revision":     e.Revision,
		"actual_revision":      e.Revision,
		"last_updated_at":      stamp(e.UpdatedAt),
		"changed_section_keys": changed[:min(len(changed), maxChangedListed)],
		"history_available":    known,
		"guidance":             "input get the latest revision, merge your intent into the changed sections, and write again with expected_revision set to current_revision",
	}
	if len(changed) > maxChangedListed {
		details["changed_section_keys_truncated"] = true
		details["changed_section_keys_total"] = len(changed)
	}
	return &Error{Kind: KindConflict, Code: CodeRevisionConflict,
		Message: fmt.Sprintf("revision conflict on %s: expected revision %d, current is %d (changed sections: %s); get it again, merge, and retry with expected_revision %d",
			e.ID, expected, e.Revision, orNone(changed), e.Revision),
		Details: details}
}

// changedKeys are the keys added, removed or changed between two digest maps.
func changedKeys(before, after map[string]string) []string {
	var out []string
	for k, v := range after {
		if before[k] != v {
			out = append(out, k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	if out == nil {
		out = []string{}
	}
	return out
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	if len(list) > 10 {
		return strings.Join(list[:10], ", ") + ", …"
	}
	return strings.Join(list, ", ")
}

// finalizeCheck is seed 001's finalize checklist, fail-closed: scope and
// findings present with substance, qa with a verdict, every ref resolving
// against the entry's pack (and the repository when at hand).
func (s *Store) finalizeCheck(ctx context.Context, e *Entry, doc Document) error {
	missingSections := []string{}
	missingFields := []string{}
	for _, sec := range []string{"scope", "findings"} {
		raw, ok := doc[sec]
		if !ok {
			missingSections = append(missingSections, sec)
		} else if !hasSubstance(decodeSection(raw)) {
			missingFields = append(missingFields, sec+".description")
		}
	}
	if raw, ok := doc["qa"]; !ok {
		missingSections = append(missingSections, "qa")
	} else {
		qa, _ := decodeSection(raw).(map[string]any)
		if v, _ := qa["verdict"].(string); strings.TrimSpace(v) == "" {
			missingFields = append(missingFields, "qa.verdict")
		}
	}
	invalidRefs, err := s.checkRefs(ctx, e, doc)
	if err != nil {
		return err
	}
	if len(missingSections)+len(missingFields)+len(invalidRefs) == 0 {
		return nil
	}
	var parts []string
	if len(missingSections) > 0 {
		parts = append(parts, "missing sections "+strings.Join(missingSections, ", "))
	}
	if len(missingFields) > 0 {
		parts = append(parts, "missing fields "+strings.Join(missingFields, ", "))
	}
	if len(invalidRefs) > 0 {
		parts = append(parts, fmt.Sprintf("%d ref(s) that do not resolve (first: %s, %s)", len(invalidRefs), clip(invalidRefs[0].Ref, 120), invalidRefs[0].Reason))
	}
	details := map[string]any{
		"missing_sections": missingSections,
		"missing_fields":   missingFields,
		"invalid_refs":     invalidRefs[:min(len(invalidRefs), maxInvalidRefs)],
		"guidance":         "scope and findings need a description, refs or diagrams; qa needs a verdict (for example pass); every ref must be path:start-end of a file in the packed commit",
	}
	if len(invalidRefs) > maxInvalidRefs {
		details["invalid_refs_total"] = len(invalidRefs)
	}
	return &Error{Kind: KindValidation, Code: CodeFinalizeValidation,
		Message: "finalize refused: " + strings.Join(parts, "; ") + "; the entry stays as it was",
		Details: details}
}

// checkRefs resolves every ref of doc for entry e.
func (s *Store) checkRefs(ctx context.Context, e *Entry, doc Document) ([]InvalidRef, error) {
	refs := doc.refs()
	out := []InvalidRef{}
	if len(refs) == 0 {
		return out, nil
	}
	p, _, err := s.readPack(e)
	if err != nil {
		return nil, err
	}
	for _, ra := range refs {
		bad := InvalidRef{Section: ra.section, Pointer: ra.pointer, Ref: ra.text}
		if !ra.ok {
			bad.Reason, bad.Detail = RefMalformed, "a ref is a string path:start-end"
			out = append(out, bad)
			continue
		}
		r, err := ParseRef(ra.text)
		if err != nil {
			bad.Reason, bad.Detail = RefMalformed, err.Error()
			out = append(out, bad)
			continue
		}
		bad.Path, bad.StartLine, bad.EndLine = r.Path, r.StartLine, r.EndLine
		if p == nil {
			bad.Reason, bad.Detail = RefNoPack, "this entry holds no pack, so refs have no commit to resolve against; write the review on the stored pack's entry"
			out = append(out, bad)
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if reason, detail := resolveRef(ctx, p, s.files, r); reason != "" {
			bad.Reason, bad.Detail = reason, detail
			out = append(out, bad)
		}
	}
	return out, nil
}
