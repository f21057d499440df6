// Package audit finds secrets (gitleaks plus credential-file signatures and
// password assignments) and checks finished packs against the policy,
// fail-closed: a check that could not run is a failure, never a pass.
package audit

import "sort"

// Verdict statuses.
const (
	StatusPass = "pass"
	StatusFail = "fail"
)

// Check kinds (seed 001's error contract `kind`).
const (
	KindValidation = "validation"
	KindPolicy     = "policy"
	KindSecret     = "secret"
	KindIntegrity  = "integrity"
	KindInternal   = "internal"
)

// Stable check codes.
const (
	CodeSchemaInvalid     = "schema_invalid"
	CodePackIDMismatch    = "pack_id_mismatch"
	CodeDigestMismatch    = "digest_mismatch"
	CodeContentMismatch   = "content_digest_mismatch"
	CodeSecretUnredacted  = "secret_unredacted"
	CodeSecretInHistory   = "secret_in_history"
	CodeSecretInContext   = "secret_in_context"
	CodeSecretPolicyFail  = "secret_policy_fail"
	CodeExcludedIncluded  = "excluded_path_included"
	CodeForbiddenContent  = "forbidden_content"
	CodeOverLimit         = "over_limit"
	CodeOverTier          = "over_tier"
	CodeOverDestination   = "over_destination"
	CodeBlobMismatch      = "blob_mismatch"
	CodeChangeUnaccounted = "change_unaccounted"
	// CodeHistoryUnavailable: the per-commit secret scan could not run (the
	// commits could be neither fetched nor read from the API's patches, or
	// a partial clone's promisor remote could not provide their blobs).
	CodeHistoryUnavailable = "history_scan_unavailable"
	// CodeHistoryBlobSkipped: a blob over the size limit was not read by
	// the per-commit secret scan.
	CodeHistoryBlobSkipped = "history_blob_skipped"
	// CodeRecordMismatch: the transparency record beside the pack is not
	// its record (another run's, or a write interrupted between the two).
	CodeRecordMismatch = "record_mismatch"
	// CodeOriginalPublished: the pack publishes the blob id, size or
	// digest of a file that holds a secret, which lets anyone confirm a
	// guess of the secret offline.
	CodeOriginalPublished = "original_published"
	// CodeContentUnavailable is a changed file whose content the
	// repository could not provide (a partial clone's blob its promisor
	// remote could not send): the change was not checked.
	CodeContentUnavailable = "content_unavailable"
	CodeInternal           = "internal_error"
)

// Check is one failed (or warned, or skipped) check, in seed 001's error
// contract shape. Details never hold a secret value.
type Check struct {
	Kind    string         `json:"kind"`
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}

// Verdict is the audit's result: every failed check, not only the first.
type Verdict struct {
	Status   string  `json:"status"`
	Failed   []Check `json:"failed"`
	Warnings []Check `json:"warnings"`
	Skipped  []Check `json:"skipped"`
}

// NewVerdict starts an empty (passing) verdict.
func NewVerdict() *Verdict {
	return &Verdict{Status: StatusPass, Failed: []Check{}, Warnings: []Check{}, Skipped: []Check{}}
}

// Fail records a failed check.
func (v *Verdict) Fail(c Check) {
	v.Failed = append(v.Failed, norm(c))
	v.Status = StatusFail
}

// Warn records a warning.
func (v *Verdict) Warn(c Check) { v.Warnings = append(v.Warnings, norm(c)) }

// Skip records a check that could not run for a known, reported reason (e.g.
// history unavailable in a shallow clone): reported, never counted as passed.
func (v *Verdict) Skip(c Check) { v.Skipped = append(v.Skipped, norm(c)) }

// Merge adds another verdict's checks.
func (v *Verdict) Merge(o *Verdict) {
	for _, c := range o.Failed {
		v.Fail(c)
	}
	v.Warnings = append(v.Warnings, o.Warnings...)
	v.Skipped = append(v.Skipped, o.Skipped...)
}

// Sort orders checks deterministically.
func (v *Verdict) Sort() {
	for _, list := range [][]Check{v.Failed, v.Warnings, v.Skipped} {
		sort.SliceStable(list, func(i, j int) bool {
			if list[i].Code != list[j].Code {
				return list[i].Code < list[j].Code
			}
			return list[i].Message < list[j].Message
		})
	}
}

func norm(c Check) Check {
	if c.Details == nil {
		c.Details = map[string]any{}
	}
	return c
}
