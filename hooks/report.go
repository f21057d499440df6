package hooks

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/safetext"
	"github.com/ctxpack/ctxpack/pipeline"
	"github.com/ctxpack/ctxpack/transparency"
)

// Write prints the report for the developer at `git push`: one short block
// per ref (verdict, files, bytes, secrets, where the pack and record are),
// then, when the push is blocked, every finding as
// `<short commit> <path>:<line> <rule-id>` (never the secret) and how to fix
// it.
func (r *Report) Write(w io.Writer) {
	dest := r.Remote
	if r.URL != "" && r.URL != r.Remote {
		dest += " (" + r.URL + ")"
	}
	fmt.Fprintf(w, "ctxpack pre-push → %s\n", safetext.Line(dest))
	if len(r.Refs) == 0 {
		fmt.Fprintln(w, "  nothing to push")
	}
	var failed []RefResult
	for _, ref := range r.Refs {
		name := safetext.Line(ref.RemoteRef)
		if ref.LocalRef != ref.RemoteRef && !ref.Deleted() {
			name = safetext.Line(ref.LocalRef + " → " + ref.RemoteRef)
		}
		switch ref.Status {
		case StatusSkipped:
			fmt.Fprintf(w, "  %s: skipped, %s\n", name, safetext.Line(ref.Why))
			continue
		case StatusBlocked:
			fmt.Fprintf(w, "  %s: BLOCKED, %s\n", name, safetext.Line(ref.Why))
			failed = append(failed, ref)
			continue
		}
		run := ref.Run
		verdict := "pass"
		if ref.Status == StatusFail {
			verdict = "FAIL"
			failed = append(failed, ref)
		}
		if ref.SameAs != "" {
			fmt.Fprintf(w, "  %s: %s, its commits are checked with %s\n", name, verdict, safetext.Line(ref.SameAs))
			continue
		}
		files := 0
		if p := run.Result.Pack; p != nil {
			files = p.Metadata.FilesIncluded
		}
		inHistory, redacted := len(run.History), len(run.Result.Secrets)
		fmt.Fprintf(w, "  %s: %s · %s %s · %s · %d file%s packed, %s bytes · %d secret%s in the new commits",
			name, verdict, plural(len(run.Commits), "new commit"), baseText(run.Base),
			plural(len(run.Snapshot.Changes), "changed file"), files, s(files),
			thousands(len(run.Result.JSON)), inHistory, s(inHistory))
		if redacted > 0 {
			fmt.Fprintf(w, ", %d redacted in the pack", redacted)
		}
		fmt.Fprintln(w)
		if ref.Why != "" && !strings.HasPrefix(ref.Why, "update ") {
			fmt.Fprintf(w, "      %s\n", safetext.Line(ref.Why))
		}
		if c := run.Snapshot.Source.Config; c != nil && c.Note != "" {
			fmt.Fprintf(w, "      %s\n", safetext.Line(c.Note))
		}
		fmt.Fprintf(w, "      pack %s (%s), record %s\n", r.rel(ref.PackFile), packID(run), r.rel(ref.RecordFile))
		switch {
		case ref.NoteErr != nil:
			fmt.Fprintf(w, "      warning: the record was not stored as a git note: %s\n", safetext.Line(ref.NoteErr.Error()))
		case ref.Noted:
			fmt.Fprintf(w, "      note %s on %s\n", transparency.NotesRef, pipeline.ShortSHA(run.Snapshot.Source.Head))
		}
	}
	if len(failed) == 0 {
		return
	}
	secrets, others := false, false
	fmt.Fprintf(w, "\nctxpack: push blocked (%s):\n", plural(len(failed), "ref"))
	for _, ref := range failed {
		if ref.Status == StatusBlocked {
			fmt.Fprintf(w, "  %s: %s\n", safetext.Line(ref.RemoteRef), safetext.Line(ref.Why))
			continue
		}
		if ref.SameAs != "" {
			continue // its findings are listed under the first ref
		}
		head := pipeline.ShortSHA(ref.Run.Snapshot.Source.Head)
		for _, c := range ref.Run.Verdict.Failed {
			line, isSecret := findingLine(c, head)
			secrets = secrets || isSecret
			others = others || !isSecret
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	fmt.Fprintln(w, "How to fix:")
	if secrets {
		fmt.Fprintln(w, "  - a real secret: remove it from every commit that adds it (git rebase -i, git commit --amend)")
		fmt.Fprintln(w, "    and rotate it: it has been in your history, consider it exposed;")
		fmt.Fprintln(w, "  - a false positive: add the finding's fingerprint (in the record file) to .gitleaksignore, or a")
		fmt.Fprintln(w, "    `gitleaks:allow` comment on the line; a push is checked by the configuration the remote already")
		fmt.Fprintln(w, "    has, so land that first (or push once with --no-verify);")
	}
	if others {
		fmt.Fprintln(w, "  - see the record file for each failed check, and fix the change or the policy (.ctxpack.yml);")
	}
	fmt.Fprintln(w, "  - or bypass this check once: git push --no-verify")
}

// findingLine names a failed check: secrets as `<short commit> <path>:<line>
// <rule-id>` (content secrets are in the head commit), others by code and
// message.
func findingLine(c audit.Check, head string) (string, bool) {
	d := c.Details
	path, _ := d["path"].(string)
	rule, _ := d["rule_id"].(string)
	if c.Kind == audit.KindSecret && path != "" && rule != "" {
		commit := head
		if v, ok := d["commit"].(string); ok && v != "" {
			commit = pipeline.ShortSHA(v)
		}
		return fmt.Sprintf("%s %s:%v %s", commit, safetext.Line(path), d["line"], safetext.Line(rule)), true
	}
	return fmt.Sprintf("%s: %s", c.Code, safetext.Line(c.Message)), c.Kind == audit.KindSecret
}

func (r *Report) rel(p string) string {
	if r.Root != "" {
		if rel, err := filepath.Rel(r.Root, p); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return p
}

func packID(run *pipeline.PushRun) string {
	if p := run.Result.Pack; p != nil && p.PackID != "" {
		return p.PackID
	}
	return "pack"
}

func baseText(base string) string {
	if base == "" {
		return "(whole tree)"
	}
	return "from " + pipeline.ShortSHA(base)
}

func plural(n int, word string) string { return fmt.Sprintf("%d %s%s", n, word, s(n)) }

func s(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func thousands(n int) string {
	str := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range str {
		if i > 0 && (len(str)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
