package pack

import (
	"context"
	"fmt"
)

// A branch or a repository can be named by a secret (a token pasted into
// `git checkout -b`, a directory named after a key), and the pack's source
// carries both names into the pack, the record, every rendering and the PR
// comment. They are read the way file names are (nameSpans: whole, by
// component, stem and dot piece) and a secret in them is replaced by its
// marker whatever the policy's action, as in the intent: a name is not
// withheld whole, and a fail action still fails the verdict through the
// event.

// WhereSource marks a finding in the name of the source's ref or repository.
const WhereSource = "source"

// redactSource redacts secrets in the snapshot's ref and repository names,
// in place, and records each finding as a source event.
func (b *builder) redactSource(ctx context.Context) error {
	fields := []struct {
		name string
		text *string
	}{
		{"ref", &b.snap.Source.Ref},
		{"repository", &b.snap.Source.Repository},
	}
	var names []string
	for _, f := range fields {
		if *f.text != "" {
			names = append(names, *f.text)
		}
	}
	if len(names) == 0 {
		return nil
	}
	spans, err := nameSpans(ctx, b.opts.Scanner, names)
	if err != nil {
		return fmt.Errorf("secret scan of the source's names: %w", err)
	}
	action := intentAction(b.secretAction())
	for _, f := range fields {
		sp := spans[*f.text]
		if len(sp) == 0 {
			continue
		}
		seen := map[string]bool{}
		for _, s := range sp {
			if !seen[s.rule] {
				seen[s.rule] = true
				b.secrets = append(b.secrets, SecretEvent{Finding: Finding{RuleID: s.rule, Path: "(source) " + f.name}, Where: WhereSource, Action: action})
			}
		}
		*f.text, _ = applyRedactions(*f.text, append([]redactSpan(nil), sp...))
	}
	return nil
}
