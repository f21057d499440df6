package transparency

import (
	"encoding/xml"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ctxpack/ctxpack/pack"
)

// Render formats.
const (
	FormatJSON     = "json"
	FormatMarkdown = "markdown"
	FormatXML      = "xml"
)

// RenderFormats lists the formats Render accepts.
var RenderFormats = []string{FormatJSON, FormatMarkdown, FormatXML}

// Render formats a pack for a prompt. json is the canonical serialization
// (pack.Marshal). markdown puts each file under a heading with its path in a
// code span and its content in a code fence longer than any backtick run in
// it; xml escapes every text and attribute, so no content can close its
// element. Both are deterministic. A file's text reads back exactly from
// either, except that XML 1.0 cannot carry most control characters: they
// become U+FFFD and the element says how many (replaced_characters).
func Render(p *pack.Pack, format string) ([]byte, error) {
	if p == nil {
		return nil, errors.New("render: no pack given")
	}
	switch format {
	case FormatJSON:
		return pack.Marshal(p)
	case FormatMarkdown:
		return []byte(rnMarkdown(p)), nil
	case FormatXML:
		return []byte(rnXML(p)), nil
	}
	return nil, fmt.Errorf("render: unknown format %q: use json, markdown or xml", format)
}

// ---- markdown ----

func rnMarkdown(p *pack.Pack) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Context pack %s\n\n", viewCodeSpan(rdOr(p.PackID, "unidentified")))
	fmt.Fprintf(&b, "- type: %s", viewVisible(rdOr(p.Type, "unknown")))
	if r := p.Metadata.SelectionReason; r != "" {
		fmt.Fprintf(&b, " (%s)", viewVisible(r))
	}
	fmt.Fprintf(&b, " · schema_version %d\n", p.SchemaVersion)
	s := p.Source
	var src []string
	for _, kv := range [][2]string{{"repository", s.Repository}, {"trigger", s.Trigger}, {"ref", s.Ref}, {"base", s.Base}, {"head", s.Head}, {"tree", s.Tree}} {
		if kv[1] != "" {
			src = append(src, kv[0]+" "+viewCodeSpan(kv[1]))
		}
	}
	if s.Dirty {
		src = append(src, "uncommitted changes")
	}
	if len(src) > 0 {
		fmt.Fprintf(&b, "- source: %s\n", strings.Join(src, " · "))
	}
	m := p.Metadata
	fmt.Fprintf(&b, "- files: %s included of %s scanned · %s excluded · %s truncated\n",
		viewInt(m.FilesIncluded), viewInt(m.TotalFilesScanned), viewInt(m.FilesExcluded), viewInt(m.TruncatedFiles))
	bu := p.Budget
	fmt.Fprintf(&b, "- budget: %s · %s dropped\n", viewBudgetUse(bu), viewCount(bu.DroppedItems, "item", "items"))
	mf := p.Manifest
	if mf.ProjectName != "" || mf.ProjectType != "" {
		fmt.Fprintf(&b, "- project: %s (%s)\n", viewCodeSpan(mf.ProjectName), viewVisible(rdOr(mf.ProjectType, "unknown")))
	}
	if mf.PurposeGuess != "" {
		fmt.Fprintf(&b, "- purpose: %s\n", viewVisible(mf.PurposeGuess))
	}
	if mf.StructureSummary != "" {
		fmt.Fprintf(&b, "- structure: %s\n", viewVisible(mf.StructureSummary))
	}
	if mf.BuildSystem != "" || mf.TestFramework != "" {
		fmt.Fprintf(&b, "- build: %s · tests: %s\n", viewVisible(rdOr(mf.BuildSystem, "unknown")), viewVisible(rdOr(mf.TestFramework, "unknown")))
	}
	if len(mf.EntryPoints) > 0 {
		fmt.Fprintf(&b, "- entry points: %s\n", rdJoinCode(mf.EntryPoints))
	}
	if len(mf.Dependencies) > 0 {
		deps := make([]string, len(mf.Dependencies))
		for i, d := range mf.Dependencies {
			deps[i] = viewCodeSpan(strings.TrimSpace(d.Name + " " + d.Version))
		}
		fmt.Fprintf(&b, "- dependencies: %s\n", strings.Join(deps, ", "))
	}

	rnIntentMarkdown(&b, p.Intent)
	if len(p.Changes) > 0 {
		fmt.Fprintf(&b, "\n## Changes (%s)\n", viewInt(len(p.Changes)))
		for i := range p.Changes {
			c := &p.Changes[i]
			fmt.Fprintf(&b, "\n### %s\n\n", viewCodeSpan(c.Path))
			fmt.Fprintf(&b, "- status: %s", viewVisible(c.Status))
			if c.OldPath != "" {
				fmt.Fprintf(&b, " from %s", viewCodeSpan(c.OldPath))
			}
			fmt.Fprintf(&b, " · +%s −%s", viewInt(c.Added), viewInt(c.Deleted))
			if c.Binary {
				b.WriteString(" · binary")
			}
			if c.DiffTruncated {
				b.WriteString(" · diff truncated")
			}
			if c.DiffWithheld != "" {
				fmt.Fprintf(&b, " · diff withheld (%s)", viewVisible(string(c.DiffWithheld)))
			}
			b.WriteString("\n")
			if len(c.Redactions) > 0 {
				fmt.Fprintf(&b, "- redactions: %s\n", rdRedactions(c.Redactions))
			}
			rnOmittedHunks(&b, c)
			if c.Diff != "" {
				b.WriteString("\n")
				viewFenceBlock(&b, c.Diff, "diff")
			}
		}
	}

	items := rdAllItems(p)
	if len(items) > 0 {
		fmt.Fprintf(&b, "\n## Files (%s)\n", viewInt(len(items)))
		for i := range items {
			it := &items[i]
			fmt.Fprintf(&b, "\n### %s\n\n", viewCodeSpan(it.Path))
			fmt.Fprintf(&b, "- id: %s · role: %s", viewCodeSpan(it.ID), viewVisible(rdOr(it.Role, "unspecified")))
			if it.Category != "" {
				fmt.Fprintf(&b, " · category: %s", viewVisible(string(it.Category)))
			}
			if it.Importance != "" {
				fmt.Fprintf(&b, " · importance: %s", viewVisible(it.Importance))
			}
			b.WriteString("\n")
			if r := rnItemRegion(it); r != "" {
				fmt.Fprintf(&b, "- %s\n", r)
			}
			fmt.Fprintf(&b, "- sha256: %s · truncated: %t · original: %s · encoding: %s\n",
				viewCodeSpan(it.SHA256), it.Truncated, viewOriginalSize(it.OriginalSizeBytes, it.OriginalWithheld), viewVisible(rdOr(it.Encoding, "unknown")))
			if len(it.Redactions) > 0 {
				fmt.Fprintf(&b, "- redactions: %s\n", rdRedactions(it.Redactions))
			}
			b.WriteString("\n")
			viewFenceBlock(&b, it.Content, viewLang(it.Path))
		}
	}

	if rs := p.RepoSummary; rs != nil {
		b.WriteString("\n## Repository summary\n\n")
		fmt.Fprintf(&b, "- description: %s\n", viewParagraphs(rs.Description))
		fmt.Fprintf(&b, "- architecture: %s\n", viewVisible(rs.ArchitecturePattern))
		for _, l := range []struct {
			name string
			vals []string
		}{{"technologies", rs.KeyTechnologies}, {"patterns", rs.NotablePatterns}, {"concerns", rs.PotentialConcerns}} {
			if len(l.vals) > 0 {
				fmt.Fprintf(&b, "- %s: %s\n", l.name, rdJoinVisible(l.vals))
			}
		}
	}
	if len(p.KeyFilesSummary) > 0 {
		fmt.Fprintf(&b, "\n## Key file summaries (%s)\n", viewInt(len(p.KeyFilesSummary)))
		full := rdLimitsFor(ProfileReviewer)
		for i := range p.KeyFilesSummary {
			k := &p.KeyFilesSummary[i]
			fmt.Fprintf(&b, "\n### %s\n\n", viewCodeSpan(k.Path))
			rdKeySummary(&b, k, full)
		}
	}
	if len(p.Entrypoints) > 0 {
		fmt.Fprintf(&b, "\n## Entrypoints (%s)\n\n", viewInt(len(p.Entrypoints)))
		rdEntrypoints(&b, p.Entrypoints)
	}
	if len(p.RiskHotspots) > 0 {
		fmt.Fprintf(&b, "\n## Risk hotspots (%s)\n\n", viewInt(len(p.RiskHotspots)))
		for _, h := range p.RiskHotspots {
			fmt.Fprintf(&b, "- %s (%s): %s", viewCodeSpan(h.Path), viewVisible(h.RiskType), viewVisible(h.Description))
			if len(h.Indicators) > 0 {
				fmt.Fprintf(&b, " — %s", rdJoinCode(h.Indicators))
			}
			b.WriteString("\n")
		}
	}

	var excluded []pack.IndexEntry
	for _, e := range p.FileIndex {
		if !e.Included {
			excluded = append(excluded, e)
		}
	}
	if len(excluded) > 0 {
		sort.SliceStable(excluded, func(i, j int) bool { return excluded[i].Path < excluded[j].Path })
		fmt.Fprintf(&b, "\n## Excluded files (%s, content not sent)\n\n", viewInt(len(excluded)))
		for _, e := range excluded {
			line := "- " + viewCodeSpan(e.Path) + " — " + viewVisible(rdOr(string(e.ExclusionReason), "unspecified"))
			if e.Detail != "" {
				line += ": " + viewVisible(e.Detail)
			}
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// ---- xml ----

type rnXMLWriter struct {
	b strings.Builder
}

// attr writes name="value" with encoding/xml's escaping (quotes, <, >, &,
// tab, newline and carriage return as references; characters XML cannot hold
// as U+FFFD).
func (w *rnXMLWriter) attr(name, value string) {
	w.b.WriteByte(' ')
	w.b.WriteString(name)
	w.b.WriteString(`="`)
	_ = xml.EscapeText(&w.b, []byte(value))
	w.b.WriteByte('"')
}

func (w *rnXMLWriter) start(name string, attrs []string) {
	w.b.WriteByte('<')
	w.b.WriteString(name)
	for i := 0; i+1 < len(attrs); i += 2 {
		if attrs[i+1] != "" {
			w.attr(attrs[i], attrs[i+1])
		}
	}
}

// open writes a start tag; attributes are name, value pairs and empty values
// are left out.
func (w *rnXMLWriter) open(name string, attrs ...string) {
	w.start(name, attrs)
	w.b.WriteByte('>')
}

// empty writes an empty-element tag and a newline.
func (w *rnXMLWriter) empty(name string, attrs ...string) {
	w.start(name, attrs)
	w.b.WriteString("/>\n")
}

func (w *rnXMLWriter) close(name string) {
	w.b.WriteString("</")
	w.b.WriteString(name)
	w.b.WriteString(">\n")
}

// text writes character data: &, < and > as entity references (so neither
// "</file>" nor "]]>" can appear), carriage return as a character reference
// (XML parsers would fold CRLF), tabs and newlines kept as they are so the
// content stays readable. Characters XML 1.0 cannot carry are replaced by
// U+FFFD; the count is returned.
func (w *rnXMLWriter) text(s string) int {
	replaced := 0
	last := 0
	for i := 0; i < len(s); {
		r, width := utf8.DecodeRuneInString(s[i:])
		var esc string
		switch {
		case r == '&':
			esc = "&amp;"
		case r == '<':
			esc = "&lt;"
		case r == '>':
			esc = "&gt;"
		case r == '\r':
			esc = "&#xD;"
		case r == '\n' || r == '\t':
		case r == utf8.RuneError && width == 1, !rnXMLChar(r):
			esc = "\uFFFD"
			replaced++
		}
		if esc != "" {
			w.b.WriteString(s[last:i])
			w.b.WriteString(esc)
			last = i + width
		}
		i += width
	}
	w.b.WriteString(s[last:])
	return replaced
}

// rnXMLChar is XML 1.0's Char production.
func rnXMLChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}

// rnXMLReplaced counts the characters text would replace.
func rnXMLReplaced(s string) int {
	n := 0
	for i := 0; i < len(s); {
		r, width := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && width == 1) || !rnXMLChar(r) {
			n++
		}
		i += width
	}
	return n
}

// textElement writes <name attrs>text</name>, marking replaced characters.
func (w *rnXMLWriter) textElement(name, text string, attrs ...string) {
	if n := rnXMLReplaced(text); n > 0 {
		attrs = append(attrs, "replaced_characters", strconv.Itoa(n))
	}
	w.open(name, attrs...)
	w.text(text)
	w.close(name)
}

func rnBool(b bool) string {
	if b {
		return "true"
	}
	return ""
}

func rnXML(p *pack.Pack) string {
	w := &rnXMLWriter{}
	w.b.WriteString(xml.Header)
	w.open("context_pack", "schema_version", strconv.Itoa(p.SchemaVersion), "pack_id", p.PackID, "type", p.Type)
	w.b.WriteByte('\n')
	s := p.Source
	w.empty("source", "repository", s.Repository, "kind", s.Kind, "trigger", s.Trigger, "ref", s.Ref,
		"base", s.Base, "head", s.Head, "tree", s.Tree, "dirty", rnBool(s.Dirty))
	m := p.Metadata
	w.empty("metadata", "pack_type", m.PackType, "selection_reason", m.SelectionReason, "created_at", m.CreatedAt,
		"files_scanned", strconv.Itoa(m.TotalFilesScanned), "files_included", strconv.Itoa(m.FilesIncluded),
		"files_excluded", strconv.Itoa(m.FilesExcluded), "content_bytes", strconv.FormatInt(m.TotalContentBytes, 10),
		"truncated_files", strconv.Itoa(m.TruncatedFiles), "tool_version", m.ToolVersion)
	bu := p.Budget
	w.empty("budget", "max_chars", strconv.Itoa(bu.MaxChars), "used_chars", strconv.Itoa(bu.UsedChars),
		"max_content_bytes", strconv.FormatInt(bu.MaxContentBytes, 10), "content_bytes", strconv.FormatInt(bu.ContentBytes, 10),
		"truncated", strconv.FormatBool(bu.Truncated), "dropped_items", strconv.Itoa(bu.DroppedItems),
		"estimated_tokens", strconv.Itoa(bu.EstimatedTokens), "token_encoding", bu.TokenEncoding)

	rnIntentXML(w, p.Intent)
	mf := p.Manifest
	w.open("manifest", "project_name", mf.ProjectName, "project_type", mf.ProjectType,
		"build_system", mf.BuildSystem, "test_framework", mf.TestFramework)
	w.b.WriteByte('\n')
	if mf.PurposeGuess != "" {
		w.textElement("purpose_guess", mf.PurposeGuess)
	}
	if mf.StructureSummary != "" {
		w.textElement("structure_summary", mf.StructureSummary)
	}
	for _, e := range mf.EntryPoints {
		w.empty("entry_point", "path", e)
	}
	for _, d := range mf.Dependencies {
		w.empty("dependency", "name", d.Name, "version", d.Version, "type", d.Type, "source", d.Source)
	}
	w.close("manifest")

	w.open("changes", "count", strconv.Itoa(len(p.Changes)))
	w.b.WriteByte('\n')
	for _, c := range p.Changes {
		w.open("change", "path", c.Path, "status", c.Status, "old_path", c.OldPath,
			"added", strconv.Itoa(c.Added), "deleted", strconv.Itoa(c.Deleted), "binary", rnBool(c.Binary),
			"diff_truncated", rnBool(c.DiffTruncated), "diff_withheld", string(c.DiffWithheld))
		w.b.WriteByte('\n')
		for _, r := range c.Redactions {
			w.empty("redaction", "line", strconv.Itoa(r.Line), "rule_id", r.RuleID)
		}
		for _, h := range c.OmittedHunks {
			w.empty("omitted_hunk", "header", h.Header, "added", strconv.Itoa(h.Added), "deleted", strconv.Itoa(h.Deleted), "symbol", h.Symbol)
		}
		if c.Diff != "" {
			w.textElement("diff", c.Diff)
		}
		w.close("change")
	}
	w.close("changes")

	items := rdAllItems(p)
	w.open("files", "count", strconv.Itoa(len(items)))
	w.b.WriteByte('\n')
	for _, it := range items {
		w.open("file", "id", it.ID, "path", it.Path, "role", it.Role, "category", string(it.Category),
			"importance", it.Importance, "encoding", it.Encoding, "sha256", it.SHA256, "blob", it.Blob,
			"truncated", strconv.FormatBool(it.Truncated), "original_size_bytes", rnSize(it.OriginalSizeBytes), "original_withheld", it.OriginalWithheld,
			"start_line", rnLine(it.StartLine), "end_line", rnLine(it.EndLine), "symbol", it.Symbol, "type", it.SymbolType,
			"relationship", strings.Join(it.Relationship, " "), "distance", rnDistance(it.Distance))
		w.b.WriteByte('\n')
		for _, r := range it.Redactions {
			w.empty("redaction", "line", strconv.Itoa(r.Line), "rule_id", r.RuleID)
		}
		w.textElement("content", it.Content)
		w.close("file")
	}
	w.close("files")

	if rs := p.RepoSummary; rs != nil {
		w.open("repo_summary", "architecture_pattern", rs.ArchitecturePattern)
		w.b.WriteByte('\n')
		w.textElement("description", rs.Description)
		for _, l := range []struct {
			name string
			vals []string
		}{{"key_technology", rs.KeyTechnologies}, {"notable_pattern", rs.NotablePatterns}, {"potential_concern", rs.PotentialConcerns}} {
			for _, v := range l.vals {
				w.textElement(l.name, v)
			}
		}
		w.close("repo_summary")
	}
	for _, k := range p.KeyFilesSummary {
		w.open("key_file_summary", "path", k.Path, "category", string(k.Category))
		w.b.WriteByte('\n')
		w.textElement("summary", k.Summary)
		for _, v := range k.Exports {
			w.textElement("export", v)
		}
		for _, v := range k.Dependencies {
			w.textElement("dependency", v)
		}
		for _, v := range k.NotableCode {
			w.textElement("notable_code", v)
		}
		w.close("key_file_summary")
	}
	for _, e := range p.Entrypoints {
		w.open("entrypoint", "path", e.Path, "type", e.Type)
		w.b.WriteByte('\n')
		w.textElement("description", e.Description)
		for _, r := range e.RoutesOrCommands {
			w.textElement("route_or_command", r)
		}
		w.close("entrypoint")
	}
	for _, h := range p.RiskHotspots {
		w.open("risk_hotspot", "path", h.Path, "risk_type", h.RiskType)
		w.b.WriteByte('\n')
		w.textElement("description", h.Description)
		for _, v := range h.Indicators {
			w.textElement("indicator", v)
		}
		w.close("risk_hotspot")
	}

	var excluded []pack.IndexEntry
	for _, e := range p.FileIndex {
		if !e.Included {
			excluded = append(excluded, e)
		}
	}
	sort.SliceStable(excluded, func(i, j int) bool { return excluded[i].Path < excluded[j].Path })
	w.open("excluded", "count", strconv.Itoa(len(excluded)))
	w.b.WriteByte('\n')
	for _, e := range excluded {
		w.empty("excluded_file", "path", e.Path, "reason", string(e.ExclusionReason), "detail", e.Detail,
			"size_bytes", rnSize(e.SizeBytes), "original_withheld", e.OriginalWithheld)
	}
	w.close("excluded")
	w.close("context_pack")
	return w.b.String()
}

// rnSize is a size attribute: empty (left out) when the size is withheld.
func rnSize(n *int64) string {
	if n == nil {
		return ""
	}
	return strconv.FormatInt(*n, 10)
}

// rnLine is a line number or distance as an attribute: "" (left out) for 0.
// rnDistance is an item's distance attribute ("" when it has none).
func rnDistance(d *int) string {
	if d == nil {
		return ""
	}
	return strconv.Itoa(*d)
}

func rnLine(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}
