package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/transparency"
)

// ReadInput is seed 001's output read: an entry (by id or name) read page by
// page with a profile.
type ReadInput struct {
	Target
	Profile   string
	Limit     int
	Offset    int
	PageToken string
	Contains  string
	// Nav words the deep-nav hints for the selected entry; nil words them
	// as ctxpack store read command lines.
	Nav func(id string, h transparency.ReadHint) string
}

// Read renders one page of an entry as markdown: its document sections
// (scope, qa and findings first, each ref with its resolution) followed by
// its pack's chunks (transparency.Read), and a LEGEND that adds how the
// entry was selected and its freshness. Page tokens are bound to the
// entry's revision: a write in between makes them stale.
func (s *Store) Read(ctx context.Context, in ReadInput) (string, error) {
	if err := checkTarget(in.Target, "read"); err != nil {
		return "", err
	}
	var out string
	err := s.lock(ctx, false, func() error {
		now := s.now()
		e, sel, err := s.resolve(in.Target, now)
		if err != nil {
			return err
		}
		p, recData, err := s.readPack(e)
		if err != nil {
			return err
		}
		var rec *transparency.Record
		if recData != nil {
			if rec, err = transparency.ParseRecord(recData); err != nil {
				return fmt.Errorf("the record of %s is damaged: %w", e.ID, err)
			}
		}
		profile := strings.ToLower(strings.TrimSpace(in.Profile))
		sections := s.sections(ctx, e, p, profile, in.PageToken)
		v := s.view(e, now, false)
		legend := []transparency.LegendLine{
			{Key: "name", Value: orDash(e.Name)},
			{Key: "selected_by", Value: sel.SelectedBy},
			{Key: "selected_revision", Value: strconv.Itoa(sel.SelectedRevision)},
			{Key: "selected_status", Value: sel.SelectedStatus},
			{Key: "freshness_state", Value: v.FreshnessState},
			{Key: "expires_at", Value: v.ExpiresAt},
			{Key: "ttl_remaining", Value: strconv.FormatInt(v.TTLRemaining, 10) + "s"},
		}
		if v.Warning != "" {
			legend = append(legend, transparency.LegendLine{Key: "warning", Value: v.Warning})
		}
		nav := in.Nav
		if nav == nil {
			nav = cliNav
		}
		id := e.ID
		out, err = transparency.Read(p, rec, transparency.ReadOptions{
			Profile: in.Profile, Limit: in.Limit, Offset: in.Offset, PageToken: in.PageToken, Contains: in.Contains,
			Sections: sections, ID: e.ID, Legend: legend, Binding: "revision " + strconv.Itoa(e.Revision),
			Nav: func(h transparency.ReadHint) string { return nav(id, h) },
		})
		var re *transparency.ReadError
		if errors.As(err, &re) {
			return AsError(err)
		}
		return err
	})
	return out, err
}

// cliNav words hints as ctxpack store read command lines.
func cliNav(id string, h transparency.ReadHint) string {
	s := "ctxpack store read " + id
	if h.NextPage {
		return s + " --page-token TOKEN"
	}
	if h.Profile != "" {
		s += " --profile " + h.Profile
	}
	switch {
	case h.Contains != "":
		q, ok := shellWord(h.Contains)
		if !ok {
			return ""
		}
		s += " --contains " + q
	case h.Placeholder:
		s += " --contains 'path/or/id'"
	}
	return s
}

// shellWord quotes s for a POSIX shell when it is printable ASCII.
func shellWord(s string) (string, bool) {
	for _, r := range s {
		if r < 0x20 || r > 0x7e || r == '`' {
			return "", false
		}
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'", true
}

// sectionOrder puts the handoff first: scope, qa (the verdict), findings,
// then the other sections by key.
func sectionOrder(keys []string) []string {
	rank := map[string]int{"scope": 0, "qa": 1, "findings": 2}
	out := append([]string(nil), keys...)
	sort.SliceStable(out, func(i, j int) bool {
		ri, iok := rank[out[i]]
		rj, jok := rank[out[j]]
		switch {
		case iok && jok:
			return ri < rj
		case iok != jok:
			return iok
		}
		return out[i] < out[j]
	})
	return out
}

// renderLimits bound a compact section rendering (0 = none).
type renderLimits struct {
	text, items, depth int
}

func renderLimitsFor(profile string) (renderLimits, bool) {
	switch profile {
	case transparency.ProfileReviewer:
		return renderLimits{}, true
	case transparency.ProfileExecutor:
		return renderLimits{text: 1000, items: 50, depth: 6}, false
	}
	return renderLimits{text: 280, items: 10, depth: 4}, false
}

// sections renders the document's sections for a profile; a read that
// continues with a page token and names no profile reads the token's.
func (s *Store) sections(ctx context.Context, e *Entry, p *pack.Pack, profile, token string) []transparency.ReadSection {
	if profile == "" && token != "" {
		profile = transparency.TokenProfile(token)
	}
	lim, full := renderLimitsFor(profile)
	var out []transparency.ReadSection
	refsBySection := map[string][]refAt{}
	for _, r := range e.Document.refs() {
		refsBySection[r.section] = append(refsBySection[r.section], r)
	}
	for _, key := range sectionOrder(e.Document.Keys()) {
		var b strings.Builder
		tree := decodeSection(e.Document[key])
		if full {
			pretty, _ := json.MarshalIndent(tree, "", "  ")
			transparency.FenceBlock(&b, string(pretty)+"\n", "json")
		} else {
			renderTree(&b, tree, lim, 0, "")
		}
		if refs := refsBySection[key]; len(refs) > 0 {
			b.WriteString("\nrefs:\n")
			for _, ra := range refs {
				s.renderRef(ctx, &b, p, ra, full)
			}
		}
		out = append(out, transparency.ReadSection{ID: key, Title: "document: " + key, Body: b.String()})
	}
	return out
}

// renderTree writes a JSON tree as a markdown list, strings as visible
// one-line text, clipped to the limits.
func renderTree(b *strings.Builder, v any, lim renderLimits, depth int, indent string) {
	if lim.depth > 0 && depth >= lim.depth {
		b.WriteString(indent + "- …\n")
		return
	}
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if len(keys) == 0 {
			b.WriteString(indent + "- (empty)\n")
		}
		for _, k := range keys {
			if scalar, ok := scalarText(t[k], lim); ok {
				fmt.Fprintf(b, "%s- %s: %s\n", indent, transparency.CodeSpan(k), scalar)
				continue
			}
			fmt.Fprintf(b, "%s- %s:\n", indent, transparency.CodeSpan(k))
			renderTree(b, t[k], lim, depth+1, indent+"  ")
		}
	case []any:
		n := len(t)
		if lim.items > 0 {
			n = min(n, lim.items)
		}
		if len(t) == 0 {
			b.WriteString(indent + "- (none)\n")
		}
		for i, e := range t[:n] {
			if scalar, ok := scalarText(e, lim); ok {
				fmt.Fprintf(b, "%s- %s\n", indent, scalar)
				continue
			}
			fmt.Fprintf(b, "%s- [%d]\n", indent, i)
			renderTree(b, e, lim, depth+1, indent+"  ")
		}
		if n < len(t) {
			fmt.Fprintf(b, "%s- … and %d more (profile reviewer shows all)\n", indent, len(t)-n)
		}
	default:
		s, _ := scalarText(v, lim)
		fmt.Fprintf(b, "%s- %s\n", indent, s)
	}
}

// scalarText renders a scalar as visible one-line text.
func scalarText(v any, lim renderLimits) (string, bool) {
	switch t := v.(type) {
	case string:
		s := t
		if lim.text > 0 {
			s = transparency.Clip(s, lim.text)
		}
		return transparency.Visible(s), true
	case json.Number:
		return t.String(), true
	case bool:
		return strconv.FormatBool(t), true
	case nil:
		return "null", true
	}
	return "", false
}

// renderRef writes one ref with its resolution; the reviewer profile adds
// the lines the pack sent for it (never lines the pack did not send).
func (s *Store) renderRef(ctx context.Context, b *strings.Builder, p *pack.Pack, ra refAt, full bool) {
	if !ra.ok {
		fmt.Fprintf(b, "- (not a string) at %s — ⚠️ stale: malformed\n", transparency.CodeSpan(ra.pointer))
		return
	}
	r, err := ParseRef(ra.text)
	if err != nil {
		fmt.Fprintf(b, "- %s — ⚠️ stale: malformed (%s)\n", transparency.CodeSpan(ra.text), transparency.Visible(err.Error()))
		return
	}
	if p == nil {
		fmt.Fprintf(b, "- %s — ⚠️ stale: no_pack\n", transparency.CodeSpan(ra.text))
		return
	}
	if reason, detail := resolveRef(ctx, p, s.files, r); reason != "" {
		fmt.Fprintf(b, "- %s — ⚠️ stale: %s (%s)\n", transparency.CodeSpan(ra.text), reason, transparency.Visible(detail))
		return
	}
	fmt.Fprintf(b, "- %s — resolves\n", transparency.CodeSpan(ra.text))
	if !full {
		return
	}
	carried := linesOf(p, r.Path)
	var lines []string
	for l := r.StartLine; l <= r.EndLine && carried != nil; l++ {
		text, ok := carried.text[l]
		if !ok {
			lines = nil
			break
		}
		lines = append(lines, text)
	}
	if lines == nil {
		b.WriteString("  (these lines are not in the pack)\n")
		return
	}
	var code strings.Builder
	transparency.FenceBlock(&code, strings.Join(lines, "\n")+"\n", transparency.FenceLang(r.Path))
	for _, l := range strings.SplitAfter(strings.TrimSuffix(code.String(), "\n"), "\n") {
		b.WriteString("  " + l)
	}
	b.WriteString("\n")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// RenderList renders views as output list's markdown, with a warning line
// for each expiring or expired entry.
func RenderList(views []*View, freshness string) string {
	var b strings.Builder
	filter := freshness
	if filter == "" {
		filter = "fresh and expiring_soon (expired hidden: pass freshness=expired)"
	}
	fmt.Fprintf(&b, "# ctxpack store: %d pack(s)\n\n- freshness: %s\n\n", len(views), filter)
	if len(views) == 0 {
		b.WriteString("No pack.\n")
	}
	for _, v := range views {
		fmt.Fprintf(&b, "## %s %s\n\n", transparency.CodeSpan(v.ID), transparency.CodeSpan(orDash(v.Name)))
		fmt.Fprintf(&b, "- revision %d · %s · %s · expires_at %s · ttl_remaining %ds\n", v.Revision, v.Status, v.FreshnessState, v.ExpiresAt, v.TTLRemaining)
		if v.Pack != nil {
			fmt.Fprintf(&b, "- pack of %s", transparency.CodeSpan(v.Pack.Repository))
			if v.Pack.Head != "" {
				fmt.Fprintf(&b, " at %s", transparency.CodeSpan(short(v.Pack.Head)))
			}
			if v.Pack.Ref != "" {
				fmt.Fprintf(&b, " (ref %s)", transparency.CodeSpan(v.Pack.Ref))
			}
			fmt.Fprintf(&b, " · trigger %s · verdict %s\n", transparency.Visible(v.Pack.Trigger), v.Pack.Verdict)
		} else {
			b.WriteString("- document only (no pack)\n")
		}
		if len(v.Sections) > 0 {
			fmt.Fprintf(&b, "- sections: %s\n", strings.Join(v.Sections, ", "))
		} else {
			b.WriteString("- sections: none yet\n")
		}
		if v.Warning != "" {
			fmt.Fprintf(&b, "- ⚠️ %s\n", transparency.Visible(v.Warning))
		}
		b.WriteString("\n")
	}
	return b.String()
}
