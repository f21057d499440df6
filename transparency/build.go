package transparency

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/pack"
)

// Where a secret finding was made.
const (
	WhereContent = "content"
	WhereDiff    = "diff"
	WhereHistory = "history"
)

// HistoryReported is the default action of a history finding: a secret in a
// commit of the range cannot be redacted from history, only reported.
const HistoryReported = "reported"

// BuildInput is everything a record is made of.
type BuildInput struct {
	// Result is the built pack.
	Result *pack.Result
	// PackSHA256 is the sha256 of the pack bytes as written, bare hex or
	// "sha256:<hex>". Empty means the sha256 of Result.JSON.
	PackSHA256 string
	// PolicyDigest is policy.Policy.Digest() ("sha256:<hex>").
	PolicyDigest string
	// ToolVersion defaults to the pack metadata's tool version.
	ToolVersion     string
	GitleaksVersion string
	GitleaksRules   int
	// RulesDigest identifies the effective rule set (default rules plus the
	// repository's .gitleaks.toml); bare hex is prefixed with "sha256:".
	RulesDigest string
	// History holds the findings of each commit of the range (Commit set),
	// in commit order; HistoryAction is what the policy did about them
	// (HistoryReported when empty).
	History       []pack.Finding
	HistoryAction string
	// Verdict is the audit's verdict; nil means the pack was not audited and
	// is recorded as null.
	Verdict *audit.Verdict
	// Previous is the digest of the first parent commit's record (see
	// PreviousDigest), empty when none is known.
	Previous string
}

// Build makes the transparency record of a pack. It does not modify its
// input, and the same input always gives the same record.
func Build(in BuildInput) *Record {
	rec := &Record{
		RecordVersion: RecordVersion,
		Ledger:        []pack.LedgerRow{},
		Changes:       []ChangeRow{},
		Secrets:       []SecretRow{},
		Previous:      in.Previous,
		Verdict:       copyVerdict(in.Verdict),
	}
	packSHA := in.PackSHA256
	var p *pack.Pack
	if in.Result != nil {
		p = in.Result.Pack
		if packSHA == "" && in.Result.JSON != nil {
			packSHA = DigestOf(in.Result.JSON)
		}
		for _, row := range in.Result.Ledger {
			row.RuleIDs = append([]string{}, row.RuleIDs...)
			sort.Strings(row.RuleIDs)
			rec.Ledger = append(rec.Ledger, row)
		}
		sort.SliceStable(rec.Ledger, func(i, j int) bool { return rec.Ledger[i].Path < rec.Ledger[j].Path })
		for _, ev := range in.Result.Secrets {
			rec.Secrets = append(rec.Secrets, SecretRow{
				Commit:      ev.Commit,
				Path:        ev.Path,
				Line:        ev.StartLine,
				RuleID:      ev.RuleID,
				Fingerprint: ev.Fingerprint,
				Where:       ev.Where,
				Action:      ev.Action,
			})
		}
	}
	toolVersion := in.ToolVersion
	if p != nil {
		rec.PackID = p.PackID
		rec.Source = p.Source
		rec.CreatedAt = p.Metadata.CreatedAt
		rec.ContextPackInfo = contextPackInfo(p)
		if toolVersion == "" {
			toolVersion = p.Metadata.ToolVersion
		}
		for _, c := range p.Changes {
			rec.Changes = append(rec.Changes, ChangeRow{
				Path:          c.Path,
				Status:        c.Status,
				OldPath:       c.OldPath,
				Added:         c.Added,
				Deleted:       c.Deleted,
				Binary:        c.Binary,
				DiffSent:      c.Diff != "" || c.DiffInContent,
				DiffTruncated: c.DiffTruncated,
				DiffWithheld:  c.DiffWithheld,
				Redactions:    len(c.Redactions),
			})
		}
	}
	// Content and diff findings describe the head state and come first;
	// history findings follow in the order their commits were given.
	historyAction := in.HistoryAction
	if historyAction == "" {
		historyAction = HistoryReported
	}
	commitRank := map[string]int{}
	for _, f := range in.History {
		if _, ok := commitRank[f.Commit]; !ok {
			commitRank[f.Commit] = len(commitRank) + 1
		}
		rec.Secrets = append(rec.Secrets, SecretRow{
			Commit:      f.Commit,
			Path:        f.Path,
			Line:        f.StartLine,
			RuleID:      f.RuleID,
			Fingerprint: f.Fingerprint,
			Where:       WhereHistory,
			Action:      historyAction,
		})
	}
	rank := func(s SecretRow) int {
		if s.Where != WhereHistory {
			return 0
		}
		return commitRank[s.Commit]
	}
	sort.SliceStable(rec.Secrets, func(i, j int) bool {
		a, b := rec.Secrets[i], rec.Secrets[j]
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra < rb
		}
		switch {
		case a.Path != b.Path:
			return a.Path < b.Path
		case a.Line != b.Line:
			return a.Line < b.Line
		case a.RuleID != b.RuleID:
			return a.RuleID < b.RuleID
		case a.Where != b.Where:
			return a.Where < b.Where
		case a.Fingerprint != b.Fingerprint:
			return a.Fingerprint < b.Fingerprint
		}
		return a.Action < b.Action
	})
	rec.Digests = Digests{
		PackSHA256:      normalizeDigest(packSHA),
		PolicySHA256:    normalizeDigest(in.PolicyDigest),
		ToolVersion:     toolVersion,
		GitleaksVersion: in.GitleaksVersion,
		GitleaksRules:   in.GitleaksRules,
		RulesDigest:     normalizeDigest(in.RulesDigest),
	}
	return rec
}

// contextPackInfo maps the pack metadata onto seed 000's context_pack_info:
// credentials, binary and size (= size_limit) are counted as such, every
// other reason (patterns, dependency and build directories, caches, symlinks,
// submodules, policy) as pattern.
func contextPackInfo(p *pack.Pack) ContextPackInfo {
	m := p.Metadata
	var ex ExclusionsByReason
	for r, n := range m.ExclusionsByReason {
		switch r {
		case pack.ReasonCredentials:
			ex.Credentials += n
		case pack.ReasonBinary:
			ex.Binary += n
		case pack.ReasonSizeLimit:
			ex.Size += n
		default:
			ex.Pattern += n
		}
	}
	typ := m.PackType
	if typ == "" {
		typ = p.Type
	}
	return ContextPackInfo{
		Type:               typ,
		SelectionReason:    m.SelectionReason,
		FilesScanned:       m.TotalFilesScanned,
		FilesIncluded:      m.FilesIncluded,
		FilesExcluded:      m.FilesExcluded,
		ExclusionsByReason: ex,
		ContentBytes:       m.TotalContentBytes,
		TruncatedFiles:     m.TruncatedFiles,
	}
}

// copyVerdict returns a sorted deep-enough copy with no nil lists.
func copyVerdict(v *audit.Verdict) *audit.Verdict {
	if v == nil {
		return nil
	}
	c := &audit.Verdict{
		Status:   v.Status,
		Failed:   copyChecks(v.Failed),
		Warnings: copyChecks(v.Warnings),
		Skipped:  copyChecks(v.Skipped),
	}
	c.Sort()
	return c
}

func copyChecks(in []audit.Check) []audit.Check {
	out := make([]audit.Check, 0, len(in))
	for _, c := range in {
		d := make(map[string]any, len(c.Details))
		for k, v := range c.Details {
			d[k] = v
		}
		c.Details = d
		out = append(out, c)
	}
	return out
}

// normalizeDigest writes a bare sha256 hex as "sha256:<hex>"; anything else
// is kept as given.
func normalizeDigest(s string) string {
	s = strings.TrimSpace(s)
	if len(s) == 64 && isLowerHex(s) {
		return "sha256:" + s
	}
	if strings.HasPrefix(s, "sha256:") && len(s) == 71 {
		return "sha256:" + strings.ToLower(s[7:])
	}
	return s
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// DigestOf is "sha256:<hex>" of data.
func DigestOf(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// JSON is the record's canonical serialization (pack.Marshal: compact, HTML
// not escaped, struct field order, map keys sorted, final newline): what is
// written to the record file and stored as a git note.
func (r *Record) JSON() ([]byte, error) {
	data, err := pack.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	return data, nil
}

// Digest is "sha256:<hex>" of the record's canonical JSON, "" when the record
// cannot be serialized (JSON reports why).
func (r *Record) Digest() string {
	data, err := r.JSON()
	if err != nil {
		return ""
	}
	return DigestOf(data)
}

// ParseRecord decodes a record strictly: unknown fields, trailing data and a
// record version other than RecordVersion are errors.
func ParseRecord(data []byte) (*Record, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r Record
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("parse record: %w", err)
	}
	if dec.More() {
		return nil, errors.New("parse record: trailing data after the record")
	}
	if r.RecordVersion != RecordVersion {
		return nil, fmt.Errorf("parse record: record_version %d is not supported (want %d)", r.RecordVersion, RecordVersion)
	}
	return &r, nil
}

// IsCanonical reports whether data is exactly the canonical serialization of
// the record it holds, i.e. the bytes ctxpack writes.
func IsCanonical(data []byte) bool {
	r, err := ParseRecord(data)
	if err != nil {
		return false
	}
	again, err := r.JSON()
	return err == nil && bytes.Equal(again, data)
}
