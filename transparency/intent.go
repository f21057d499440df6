package transparency

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ctxpack/ctxpack/pack"
)

// Intent views: what the change is for, first in every rendering of a
// change pack.

// rnIntentMarkdown writes the intent section of the markdown rendering.
func rnIntentMarkdown(b *strings.Builder, in *pack.Intent) {
	if in == nil {
		return
	}
	b.WriteString("\n## Intent\n\n")
	if in.Goal != "" {
		fmt.Fprintf(b, "- goal: %s\n", viewVisible(in.Goal))
	}
	if pr := in.PullRequest; pr != nil {
		fmt.Fprintf(b, "- pull request #%d: %s", pr.Number, viewVisible(pr.Title))
		if len(pr.Labels) > 0 {
			fmt.Fprintf(b, " · labels: %s", rdJoinVisible(pr.Labels))
		}
		b.WriteString("\n")
		for _, c := range pr.Closes {
			fmt.Fprintf(b, "- closes #%d", c.Number)
			if c.Title != "" {
				fmt.Fprintf(b, ": %s", viewVisible(c.Title))
			}
			b.WriteString("\n")
		}
	}
	if t := in.Task; t != nil && t.Title != "" {
		fmt.Fprintf(b, "- task: %s\n", viewVisible(t.Title))
	}
	if len(in.Acceptance) > 0 {
		b.WriteString("- acceptance:\n")
		for _, a := range in.Acceptance {
			fmt.Fprintf(b, "  - %s\n", viewVisible(a))
		}
	}
	if len(in.Mentioned) > 0 {
		fmt.Fprintf(b, "- mentioned: %s\n", rdJoinCode(in.Mentioned))
	}
	if len(in.Commits) > 0 {
		fmt.Fprintf(b, "- commits (%s):\n", viewInt(len(in.Commits)))
		for _, c := range in.Commits {
			fmt.Fprintf(b, "  - %s %s\n", viewCodeSpan(viewShort(c.Commit)), viewVisible(c.Subject))
		}
	}
	if in.Omitted != "" {
		fmt.Fprintf(b, "- %s\n", viewVisible(in.Omitted))
	}
	if pr := in.PullRequest; pr != nil && pr.Body != "" {
		b.WriteString("\n")
		viewProseBlock(b, pr.Body, "markdown")
	}
	if t := in.Task; t != nil && t.Body != "" {
		b.WriteString("\n")
		viewProseBlock(b, t.Body, "markdown")
	}
	for _, c := range in.Commits {
		if c.Body != "" {
			fmt.Fprintf(b, "\n%s:\n\n", viewCodeSpan(viewShort(c.Commit)))
			viewProseBlock(b, c.Body, "text")
		}
	}
}

// rnIntentXML writes the intent element of the xml rendering.
func rnIntentXML(w *rnXMLWriter, in *pack.Intent) {
	if in == nil {
		return
	}
	w.open("intent", "truncated", rnBool(in.Truncated))
	w.b.WriteByte('\n')
	if in.Goal != "" {
		w.textElement("goal", in.Goal)
	}
	if t := in.Task; t != nil {
		w.open("task", "title", t.Title)
		w.b.WriteByte('\n')
		if t.Goal != "" {
			w.textElement("goal", t.Goal)
		}
		if t.Body != "" {
			w.textElement("body", t.Body)
		}
		for _, f := range t.Files {
			w.empty("file", "path", f)
		}
		w.close("task")
	}
	if pr := in.PullRequest; pr != nil {
		w.open("pull_request", "number", strconv.Itoa(pr.Number), "title", pr.Title)
		w.b.WriteByte('\n')
		for _, l := range pr.Labels {
			w.empty("label", "name", l)
		}
		for _, c := range pr.Closes {
			w.empty("closes", "number", strconv.Itoa(c.Number), "title", c.Title)
		}
		if pr.Body != "" {
			w.textElement("body", pr.Body)
		}
		w.close("pull_request")
	}
	for _, a := range in.Acceptance {
		w.textElement("acceptance", a)
	}
	for _, p := range in.Mentioned {
		w.empty("mentioned", "path", p)
	}
	for _, c := range in.Commits {
		w.open("commit", "id", c.Commit, "subject", c.Subject)
		w.b.WriteByte('\n')
		if c.Body != "" {
			w.textElement("body", c.Body)
		}
		w.close("commit")
	}
	for _, r := range in.Redactions {
		w.empty("redaction", "field", r.Field, "line", strconv.Itoa(r.Line), "rule_id", r.RuleID)
	}
	if in.Omitted != "" {
		w.textElement("omitted", in.Omitted)
	}
	w.close("intent")
}

// rnItemRegion says which lines an item is and how it relates to the
// change ("" for an item that carries none of it).
func rnItemRegion(it *pack.Item) string {
	var parts []string
	if it.StartLine > 0 {
		parts = append(parts, fmt.Sprintf("lines %s–%s", viewInt(it.StartLine), viewInt(it.EndLine)))
	}
	if it.Symbol != "" {
		s := "symbol " + viewCodeSpan(it.Symbol)
		if it.SymbolType != "" {
			s += " (" + viewVisible(it.SymbolType) + ")"
		}
		parts = append(parts, s)
	}
	if len(it.Relationship) > 0 {
		parts = append(parts, "relationship: "+rdJoinVisible(it.Relationship))
	}
	if it.Distance != nil {
		parts = append(parts, "distance "+strconv.Itoa(*it.Distance))
	}
	return strings.Join(parts, " · ")
}

// rnOmittedHunks lists the hunks of a change the budget summarised.
func rnOmittedHunks(b *strings.Builder, c *pack.Change) {
	if len(c.OmittedHunks) == 0 {
		return
	}
	fmt.Fprintf(b, "- hunks not sent (%s):\n", viewInt(len(c.OmittedHunks)))
	for _, h := range c.OmittedHunks {
		fmt.Fprintf(b, "  - %s +%s −%s", viewCodeSpan(h.Header), viewInt(h.Added), viewInt(h.Deleted))
		if h.Symbol != "" {
			fmt.Fprintf(b, " in %s", viewCodeSpan(h.Symbol))
		}
		b.WriteString("\n")
	}
}

// ChangedSymbols are the definitions a change pack's change touches: the
// symbols of its changed regions and of the hunks it summarised, in pack
// order, once each, as "path: symbol".
func ChangedSymbols(p *pack.Pack) []string {
	var out []string
	seen := map[string]bool{}
	add := func(path, sym string) {
		if sym == "" {
			return
		}
		k := path + ": " + sym
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	for _, it := range rdAllItems(p) {
		for _, r := range it.Relationship {
			if r == pack.RelChanged {
				add(it.Path, it.Symbol)
			}
		}
	}
	for _, c := range p.Changes {
		for _, h := range c.OmittedHunks {
			add(c.Path, h.Symbol)
		}
	}
	return out
}

// rdIntent opens the orchestrator page: the objective from the intent, the
// acceptance criteria, the commit subjects and the changed symbols, each
// bounded for the compact profiles.
func rdIntent(b *strings.Builder, p *pack.Pack, lim rdLimits) bool {
	in := p.Intent
	if in == nil {
		return false
	}
	max := 8
	if lim.full {
		max = 1 << 30
	}
	list := func(title string, items []string, code bool) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(b, "- %s:", title)
		for i, s := range items {
			if i == max {
				fmt.Fprintf(b, " … %s more", viewInt(len(items)-max))
				break
			}
			if code {
				fmt.Fprintf(b, " %s", viewCodeSpan(s))
			} else {
				fmt.Fprintf(b, "\n  - %s", viewVisible(s))
			}
			if code && i < len(items)-1 && i < max-1 {
				b.WriteString(",")
			}
		}
		b.WriteString("\n")
	}
	if in.Goal != "" {
		fmt.Fprintf(b, "**Objective:** %s\n\n", viewVisible(in.Goal))
	}
	b.WriteString("### Intent\n\n")
	if pr := in.PullRequest; pr != nil {
		fmt.Fprintf(b, "- pull request #%d: %s\n", pr.Number, viewVisible(pr.Title))
		for _, c := range pr.Closes {
			fmt.Fprintf(b, "- closes #%d", c.Number)
			if c.Title != "" {
				fmt.Fprintf(b, ": %s", viewVisible(c.Title))
			}
			b.WriteString("\n")
		}
	}
	list("acceptance", in.Acceptance, false)
	subjects := make([]string, len(in.Commits))
	for i, c := range in.Commits {
		subjects[i] = viewShort(c.Commit) + " " + c.Subject
	}
	list("commits", subjects, false)
	list("changed symbols", ChangedSymbols(p), true)
	list("mentioned", in.Mentioned, true)
	b.WriteString("\n")
	return true
}
