// Package transparency builds the transparency record of a pack (what was
// sent, what was kept back and why), its digests and hash chain, its in-toto
// attestation, its history in git notes, and the views reviewers read.
package transparency

import (
	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/pack"
)

// RecordVersion is the version of the record's JSON shape.
const RecordVersion = 1

// Record is the transparency record of one pack.
type Record struct {
	RecordVersion int         `json:"record_version"`
	PackID        string      `json:"pack_id"`
	Source        pack.Source `json:"source"`
	CreatedAt     string      `json:"created_at"`
	// ContextPackInfo is seed 000's context_pack_info, verbatim.
	ContextPackInfo ContextPackInfo `json:"context_pack_info"`
	// Ledger has one row per file of the snapshot.
	Ledger []pack.LedgerRow `json:"ledger"`
	// Changes lists the changed files and whether their diff was sent.
	Changes []ChangeRow `json:"changes"`
	// Secrets are findings in what would have left (content, diffs) and in
	// each commit of the range. Never the value.
	Secrets []SecretRow `json:"secrets"`
	Digests Digests     `json:"digests"`
	// Previous is the digest of the first parent commit's record, when known.
	Previous string         `json:"previous,omitempty"`
	Verdict  *audit.Verdict `json:"verdict"`
}

// ContextPackInfo is seed 000's "Transparency Integration" block.
type ContextPackInfo struct {
	Type               string             `json:"type"`
	SelectionReason    string             `json:"selection_reason"`
	FilesScanned       int                `json:"files_scanned"`
	FilesIncluded      int                `json:"files_included"`
	FilesExcluded      int                `json:"files_excluded"`
	ExclusionsByReason ExclusionsByReason `json:"exclusions_by_reason"`
	ContentBytes       int64              `json:"content_bytes"`
	TruncatedFiles     int                `json:"truncated_files"`
}

// ExclusionsByReason is seed 000's four counters.
type ExclusionsByReason struct {
	Credentials int `json:"credentials"`
	Binary      int `json:"binary"`
	Size        int `json:"size"`
	Pattern     int `json:"pattern"`
}

// ChangeRow is one changed file as the record shows it.
type ChangeRow struct {
	Path     string `json:"path"`
	Status   string `json:"status"`
	OldPath  string `json:"old_path,omitempty"`
	Added    int    `json:"added"`
	Deleted  int    `json:"deleted"`
	Binary   bool   `json:"binary,omitempty"`
	DiffSent bool   `json:"diff_sent"`
	// DiffTruncated is true when the diff sent was cut (head and tail kept).
	DiffTruncated bool        `json:"diff_truncated,omitempty"`
	DiffWithheld  pack.Reason `json:"diff_withheld,omitempty"`
	// Redactions is the number of secrets replaced in the diff sent.
	Redactions int `json:"redactions,omitempty"`
}

// SecretRow is one finding: where, which rule, its fingerprint and what was
// done. It never holds the secret.
type SecretRow struct {
	Commit      string `json:"commit,omitempty"`
	Path        string `json:"path"`
	Line        int    `json:"line"`
	RuleID      string `json:"rule_id"`
	Fingerprint string `json:"fingerprint"`
	// Where is content, diff or history.
	Where  string `json:"where"`
	Action string `json:"action"`
}

// Digests bind the record to the pack, the policy and the tools.
type Digests struct {
	PackSHA256      string `json:"pack_sha256"`
	PolicySHA256    string `json:"policy_sha256"`
	ToolVersion     string `json:"tool_version"`
	GitleaksVersion string `json:"gitleaks_version"`
	GitleaksRules   int    `json:"gitleaks_rule_count"`
	RulesDigest     string `json:"rules_digest"`
}
