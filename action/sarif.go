package action

import (
	"encoding/json"
	"net/url"
	"path"
	"sort"
	"strings"

	"github.com/ctxpack/ctxpack/audit"
)

// SARIF 2.1.0, the subset GitHub code scanning reads.

const (
	sarifSchema  = "https://json.schemastore.org/sarif-2.1.0.json"
	sarifVersion = "2.1.0"
)

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string       `json:"id"`
	Name             string       `json:"name"`
	ShortDescription sarifMessage `json:"shortDescription"`
	DefaultConfig    sarifConfig  `json:"defaultConfiguration"`
}

type sarifConfig struct {
	Level string `json:"level"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifMessage      `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

// ruleText describes each check code for code scanning.
var ruleText = map[string]string{
	audit.CodeSchemaInvalid:      "The pack does not match the pack schema",
	audit.CodePackIDMismatch:     "The pack id does not match the pack's content",
	audit.CodeDigestMismatch:     "A pack digest does not match its bytes",
	audit.CodeContentMismatch:    "A content item's sha256 does not match its text",
	audit.CodeSecretUnredacted:   "A secret would leave the repository unredacted",
	audit.CodeSecretInHistory:    "A commit of the change adds a secret",
	audit.CodeSecretInContext:    "A secret was found in what would leave and handled by policy",
	audit.CodeSecretPolicyFail:   "A secret was found and the policy fails on secrets",
	audit.CodeExcludedIncluded:   "An excluded path is in the pack",
	audit.CodeForbiddenContent:   "Content the policy forbids would leave",
	audit.CodeOverLimit:          "The pack is over a size limit",
	audit.CodeOverTier:           "The pack is over its tier's size",
	audit.CodeOverDestination:    "The pack is over a destination's limit",
	audit.CodeBlobMismatch:       "A content item does not match the commit's blob",
	audit.CodeChangeUnaccounted:  "A changed file is not accounted for in the pack",
	audit.CodeHistoryUnavailable: "The per-commit secret scan could not read the change's commits",
	audit.CodeHistoryBlobSkipped: "A blob over the size limit was not read by the per-commit secret scan",
	audit.CodeRecordMismatch:     "The transparency record is not this pack's record",
	audit.CodeOriginalPublished:  "The pack publishes the blob id or size of a file holding a secret",
	audit.CodeContentUnavailable: "A changed file's content could not be read (a partial clone's unreachable promisor)",
	CodeChangeListUnavailable:    "The changed files could not be listed (shallow checkout, no API): the head tree was packed without a change list",
	audit.CodeInternal:           "A check could not run",
}

// SARIF renders the verdict's checks as a SARIF 2.1.0 log: failed checks are
// errors, warnings warnings, skipped checks notes. prefix is the repository
// directory relative to the workspace ("" for the root), so locations are
// relative to the repository root as code scanning expects.
//
// policyFile is where results without a file of their own point (the
// repository's policy, relative to the repository root).
func SARIF(v *audit.Verdict, toolVersion, prefix, policyFile string) ([]byte, error) {
	if policyFile == "" {
		policyFile = ".ctxpack.yml"
	}
	run := sarifRun{
		Tool: sarifTool{Driver: sarifDriver{Name: "ctxpack", Version: toolVersion,
			InformationURI: "https://github.com/ctxpack/ctxpack", Rules: []sarifRule{}}},
		Results: []sarifResult{},
	}
	index := map[string]int{}
	add := func(c audit.Check, level string) {
		i, ok := index[c.Code]
		if !ok {
			desc := ruleText[c.Code]
			if desc == "" {
				desc = "ctxpack check " + c.Code
			}
			i = len(run.Tool.Driver.Rules)
			index[c.Code] = i
			run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{ID: c.Code, Name: ruleName(c.Code),
				ShortDescription: sarifMessage{desc}, DefaultConfig: sarifConfig{level}})
		}
		r := sarifResult{RuleID: c.Code, RuleIndex: i, Level: level, Message: sarifMessage{c.Message}}
		// Code scanning rejects a whole file for one result without a
		// location: a check about the repository (no path) points at the
		// policy file.
		p, line := checkLocation(c)
		if p == "" {
			p, line = policyFile, 0
		}
		loc := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: uriOf(path.Join(prefix, p)), URIBaseID: "%SRCROOT%"}}}
		if line > 0 {
			loc.PhysicalLocation.Region = &sarifRegion{StartLine: line}
		}
		r.Locations = []sarifLocation{loc}
		if fp, _ := c.Details["fingerprint"].(string); fp != "" {
			r.PartialFingerprints = map[string]string{"ctxpackFinding/v1": fp}
		}
		run.Results = append(run.Results, r)
	}
	if v != nil {
		for _, c := range v.Failed {
			add(c, "error")
		}
		for _, c := range v.Warnings {
			add(c, "warning")
		}
		for _, c := range v.Skipped {
			add(c, "note")
		}
	}
	sort.SliceStable(run.Results, func(i, j int) bool { return run.Results[i].RuleID < run.Results[j].RuleID })
	return json.MarshalIndent(sarifLog{Schema: sarifSchema, Version: sarifVersion, Runs: []sarifRun{run}}, "", "  ")
}

func ruleName(code string) string {
	var b strings.Builder
	for _, part := range strings.Split(code, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// uriOf percent-encodes each segment of a relative path.
func uriOf(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// checkLocation reads a check's path and line from its details.
func checkLocation(c audit.Check) (string, int) {
	p, _ := c.Details["path"].(string)
	line := 0
	switch n := c.Details["line"].(type) {
	case int:
		line = n
	case int64:
		line = int(n)
	case float64:
		line = int(n)
	case json.Number:
		if v, err := n.Int64(); err == nil {
			line = int(v)
		}
	}
	if line < 0 {
		line = 0
	}
	return p, line
}
