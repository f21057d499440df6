package pack

import "context"

// SecretScanner finds secrets in bytes that would leave the repository. The
// audit package implements it with gitleaks; pack only applies the result.
// An error means the scan could not run, which the caller treats as a failure.
// Scan is called from several goroutines at once. It reads content and
// never changes it, nor keeps it after it returns: a caller may hand over
// the bytes of a string.
type SecretScanner interface {
	Scan(ctx context.Context, path string, content []byte) ([]Finding, error)
}

// SumScanner is a SecretScanner that can be handed the sha256 of what it
// scans, which the caller has already (the builder from reading the file,
// the audit from checking the item), so that it is not hashed again (a
// scan cache is keyed by it). sum must be the sha256 of content.
type SumScanner interface {
	ScanSum(ctx context.Context, path string, content []byte, sum [32]byte) ([]Finding, error)
}

// ScanWithSum is s.Scan of content, handing sum (the sha256 of content,
// nil when the caller has none) to a SumScanner.
func ScanWithSum(ctx context.Context, s SecretScanner, path string, content []byte, sum *[32]byte) ([]Finding, error) {
	if ss, ok := s.(SumScanner); ok && sum != nil {
		return ss.ScanSum(ctx, path, content, *sum)
	}
	return s.Scan(ctx, path, content)
}

// TextScanner is a SecretScanner that scans text which is no file of the
// repository: the intent (a task, commit messages, a pull request), file
// names, the pack's derived fields, a query. No gitleaks:allow comment is
// honoured there: a comment is its file's configuration, and such a text
// has no file, whoever wrote it.
type TextScanner interface {
	ScanText(ctx context.Context, where string, text []byte) ([]Finding, error)
}

// ScanText scans text that is no file's content or diff, where naming it:
// s's ScanText when s is a TextScanner, else its Scan.
func ScanText(ctx context.Context, s SecretScanner, where string, text []byte) ([]Finding, error) {
	if ts, ok := s.(TextScanner); ok {
		return ts.ScanText(ctx, where, text)
	}
	return s.Scan(ctx, where, text)
}

// Finding is one secret: where it is and which rule found it. It never holds
// the secret's value, only the byte span to redact.
type Finding struct {
	RuleID      string `json:"rule_id"`
	Path        string `json:"path"`
	Commit      string `json:"commit,omitempty"`
	StartLine   int    `json:"line"`
	EndLine     int    `json:"end_line"`
	Fingerprint string `json:"fingerprint"`
	// Start and End are the byte offsets of the secret in the scanned content
	// (End exclusive), used to redact exactly that span.
	Start int `json:"-"`
	End   int `json:"-"`
}
