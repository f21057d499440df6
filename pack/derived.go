package pack

import (
	"fmt"
	"strings"
)

// derivedFinding completes a finding in a string a Summary pack derived from
// path's content (a dependency, a notable line): the file's line where the
// found text first appears and the fingerprint `path:rule:line`, so the
// finding is reported like one in the file. (It is redacted even when the
// file's finding is ignored: the audit scans the summary's strings as they
// are, not as the file's lines.)
func (b *builder) derivedFinding(f Finding, path, found string) Finding {
	f.Path, f.StartLine, f.EndLine = path, 0, 0
	if e := b.byPath[path]; e != nil && found != "" {
		text := e.analysis
		if text == "" {
			text = e.original
		}
		if i := strings.Index(text, found); i >= 0 {
			f.StartLine = strings.Count(text[:i], "\n") + 1
			f.EndLine = f.StartLine + strings.Count(found, "\n")
		}
	}
	f.Fingerprint = fmt.Sprintf("%s:%s:%d", path, f.RuleID, f.StartLine)
	return f
}
