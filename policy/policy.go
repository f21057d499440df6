// Package policy loads and normalizes the repository's egress and size policy
// (.ctxpack.yml). Loading is strict: an unknown key, a wrong type or a bad glob
// is an error naming the key and its line, never a silent default.
package policy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/ctxpack/ctxpack/internal/fsutil"
	"github.com/ctxpack/ctxpack/internal/safetext"
	"gopkg.in/yaml.v3"
)

// FileName is the policy file looked up at the repository root.
const FileName = ".ctxpack.yml"

// Pack types and tiers accepted by the policy and the CLI.
const (
	TypeAuto    = "auto"
	TypeFull    = "full"
	TypeSummary = "summary"

	// Scopes: which files of the head tree a commit or range pack lists.
	ScopeChange = "change"
	ScopeTree   = "tree"

	TierNone    = "none"
	TierStrong  = "strong"
	TierDefault = "default"
	TierCheap   = "cheap"
)

// Secret actions.
const (
	ActionRedact  = "redact"
	ActionExclude = "exclude"
	ActionFail    = "fail"
)

// Fail-on conditions.
const (
	FailSecretUnredacted = "secret_unredacted"
	FailSecretInHistory  = "secret_in_history"
	FailForbiddenContent = "forbidden_content"
	FailOverLimit        = "over_limit"
	// FailNone, alone, is the explicit "only warn": an empty fail_on is an
	// error, never a silent "fail on nothing".
	FailNone = "none"
)

// MaxPreserveLines bounds limits.preserve_head_lines and
// preserve_tail_lines: far more lines than any truncated file keeps, and
// small enough that no sum of the two overflows.
const MaxPreserveLines = 1_000_000

// TierChars is the ceiling, in characters of the serialized pack, of each tier (seed 004).
var TierChars = map[string]int{TierStrong: 120000, TierDefault: 60000, TierCheap: 25000}

// Policy is the effective policy. Field order is the normalized order used for
// its digest.
type Policy struct {
	Version int      `yaml:"version" json:"version"`
	Pack    Pack     `yaml:"pack" json:"pack"`
	Limits  Limits   `yaml:"limits" json:"limits"`
	Secrets Secrets  `yaml:"secrets" json:"secrets"`
	Egress  Egress   `yaml:"egress" json:"egress"`
	FailOn  []string `yaml:"fail_on" json:"fail_on"`
	// ConfigFrom says whose configuration a commit, range, push or pull
	// request pack applies: the base's (the default, normalized to "": what
	// a change brings cannot loosen the check of that change) or the
	// head's ("head"). Only the base's policy can switch it.
	ConfigFrom string `yaml:"config_from,omitempty" json:"config_from,omitempty"`
}

// Where a change's configuration is read (Policy.ConfigFrom).
const (
	ConfigFromBase = "base"
	ConfigFromHead = "head"
)

// Pack selects the pack type and filters files.
type Pack struct {
	Type string `yaml:"type" json:"type"`
	Tier string `yaml:"tier" json:"tier"`
	// Scope is what a commit or range pack lists of the head tree: the
	// change scope (the changed files, the top-level files and the ignore
	// files on their paths), so its cost follows the change and not the
	// repository, or the whole tree. Working-tree packs always list the
	// whole tree.
	Scope   string   `yaml:"scope" json:"scope"`
	Include []string `yaml:"include" json:"include"`
	Exclude []string `yaml:"exclude" json:"exclude"`
}

// Limits bounds the pack (seed 000 defaults).
type Limits struct {
	// MaxTokens is the o200k token budget of a pack that has changes; 0
	// sizes it to the change (AutoTokens).
	MaxTokens         int   `yaml:"max_tokens" json:"max_tokens"`
	MaxContentBytes   int64 `yaml:"max_content_bytes" json:"max_content_bytes"`
	MaxFiles          int   `yaml:"max_files" json:"max_files"`
	MaxFileBytes      int64 `yaml:"max_file_bytes" json:"max_file_bytes"`
	PreserveHeadLines int   `yaml:"preserve_head_lines" json:"preserve_head_lines"`
	PreserveTailLines int   `yaml:"preserve_tail_lines" json:"preserve_tail_lines"`
}

// Secrets says what to do with a secret found in what would leave.
type Secrets struct {
	Action string `yaml:"action" json:"action"`
	// Config is a gitleaks config file relative to the repository root; empty
	// means .gitleaks.toml when present.
	Config string `yaml:"config" json:"config"`
	// History is what a secret introduced by a commit of the range does to the
	// verdict: fail (default) or warn.
	History string `yaml:"history" json:"history"`
	// HistoryUnavailable is what a per-commit scan that could not run (the
	// commits are neither in the checkout, nor fetchable, nor in the API's
	// patches) does to the verdict: fail (the default, normalized to "") or
	// warn (reported as a skipped check).
	HistoryUnavailable string `yaml:"history_unavailable,omitempty" json:"history_unavailable,omitempty"`
	// HistoryMaxBlobBytes is the largest blob the per-commit scan reads
	// (DefaultHistoryMaxBlobBytes when 0, the default elided from the
	// digest): a commit's file over it is not scanned, and fails the
	// verdict as a scan that could not run (history_blob_skipped) unless
	// HistoryUnavailable is warn.
	HistoryMaxBlobBytes int64 `yaml:"history_max_blob_bytes,omitempty" json:"history_max_blob_bytes,omitempty"`
}

// DefaultHistoryMaxBlobBytes is the per-commit scan's default blob limit,
// 100 MiB: history is scanned, not sent, so it is far above
// limits.max_content_bytes. It is GitHub's own limit on a pushed file, so
// every file a GitHub repository can hold is read, while a blob's read
// and line diff (a few times its size, on each core diffing a commit)
// stay within a CI runner's memory. gitleaks' git scan has no limit of its
// own (--max-target-megabytes 0); git's diff calls a blob over
// core.bigFileThreshold (512 MiB) binary and shows it no lines.
const DefaultHistoryMaxBlobBytes int64 = 100 << 20

// Egress says where the pack may go and what must never leave.
type Egress struct {
	Destinations []Destination `yaml:"destinations" json:"destinations"`
	Forbid       []string      `yaml:"forbid" json:"forbid"`
}

// Destination is a provider the pack may be sent to, with its limits (0 = none).
type Destination struct {
	Name      string `yaml:"name" json:"name"`
	MaxChars  int    `yaml:"max_chars" json:"max_chars"`
	MaxTokens int    `yaml:"max_tokens" json:"max_tokens"`
}

// Default returns the built-in policy used when no file is present.
func Default() *Policy {
	return &Policy{
		Version: 1,
		Pack:    Pack{Type: TypeAuto, Tier: TierNone, Scope: ScopeChange, Include: []string{}, Exclude: []string{}},
		Limits: Limits{
			MaxContentBytes:   512000,
			MaxFiles:          200,
			MaxFileBytes:      50000,
			PreserveHeadLines: 100,
			PreserveTailLines: 50,
		},
		Secrets: Secrets{Action: ActionRedact, History: "fail"},
		Egress:  Egress{Destinations: []Destination{}, Forbid: []string{}},
		FailOn:  []string{FailSecretUnredacted, FailSecretInHistory, FailForbiddenContent, FailOverLimit},
	}
}

// Error is a policy error that names the file, the key and the line.
type Error struct {
	File string
	Line int
	Key  string
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, ": key %s", safetext.Quote(e.Key))
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// LoadFile reads a policy file. A missing file is an error; use Find for the
// "defaults when absent" behaviour.
func LoadFile(path string) (*Policy, error) {
	data, err := fsutil.ReadFile(path, fsutil.MaxPolicyBytes)
	if err != nil {
		return nil, fmt.Errorf("read policy: %w", err)
	}
	return Parse(path, data)
}

// Find loads root/.ctxpack.yml when present and the defaults otherwise. The
// second result is the file used ("" for the defaults).
func Find(root string) (*Policy, string, error) {
	path := root + "/" + FileName
	data, err := fsutil.ReadInRoot(root, FileName, fsutil.MaxPolicyBytes)
	if errors.Is(err, os.ErrNotExist) {
		return Default(), "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("read policy: %w", err)
	}
	p, err := Parse(path, data)
	return p, path, err
}

// Parse decodes a policy document strictly over the defaults and validates it.
func Parse(name string, data []byte) (*Policy, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &Error{File: name, Msg: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	p := Default()
	if len(doc.Content) == 0 { // empty file: defaults
		return p, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &Error{File: name, Line: root.Line, Msg: "the policy must be a mapping of keys (version, pack, limits, secrets, egress, fail_on)"}
	}
	if err := checkKeys(name, "", root, fieldsOf[Policy]()); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(p); err != nil && !errors.Is(err, io.EOF) {
		return nil, typeError(name, root, err)
	}
	if err := p.validate(name, root); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Policy) validate(name string, root *yaml.Node) error {
	bad := func(key, msg string) error {
		return &Error{File: name, Line: lineOf(root, key), Key: key, Msg: msg}
	}
	if p.Version != 1 {
		return bad("version", fmt.Sprintf("unsupported version %d; this ctxpack reads version 1", p.Version))
	}
	if !oneOf(p.Pack.Type, TypeAuto, TypeFull, TypeSummary) {
		return bad("pack.type", fmt.Sprintf("%s is not a pack type; use auto, full or summary", safetext.Quote(p.Pack.Type)))
	}
	// A key written with no value (`include:`) decodes to a nil list: make it
	// the empty list it means, so equal policies have equal digests.
	for _, l := range []*[]string{&p.Pack.Include, &p.Pack.Exclude, &p.Egress.Forbid} {
		if *l == nil {
			*l = []string{}
		}
	}
	if p.Egress.Destinations == nil {
		p.Egress.Destinations = []Destination{}
	}
	if p.Pack.Tier == "" {
		p.Pack.Tier = TierNone
	}
	if p.Pack.Scope == "" {
		p.Pack.Scope = ScopeChange
	}
	if !oneOf(p.Pack.Scope, ScopeChange, ScopeTree) {
		return bad("pack.scope", fmt.Sprintf("%s is not a scope; use change or tree", safetext.Quote(p.Pack.Scope)))
	}
	if _, ok := TierChars[p.Pack.Tier]; !ok && p.Pack.Tier != TierNone {
		return bad("pack.tier", fmt.Sprintf("%s is not a tier; use none, strong, default or cheap", safetext.Quote(p.Pack.Tier)))
	}
	for _, g := range []struct {
		key   string
		globs []string
	}{{"pack.include", p.Pack.Include}, {"pack.exclude", p.Pack.Exclude}, {"egress.forbid", p.Egress.Forbid}} {
		for i, glob := range g.globs {
			if err := CheckGlob(glob); err != nil {
				return &Error{File: name, Line: seqLine(root, g.key, i), Key: fmt.Sprintf("%s[%d]", g.key, i), Msg: err.Error()}
			}
		}
	}
	l := p.Limits
	if l.MaxTokens < 0 || l.MaxTokens > MaxTokenBudget {
		return bad("limits.max_tokens", fmt.Sprintf("%d is out of range: 0 (sized to the change) or a number of tokens up to %d", l.MaxTokens, MaxTokenBudget))
	}
	if l.MaxContentBytes <= 0 {
		return bad("limits.max_content_bytes", "must be a positive number of bytes")
	}
	if l.MaxFiles <= 0 {
		return bad("limits.max_files", "must be a positive number of files")
	}
	if l.MaxFileBytes <= 0 {
		return bad("limits.max_file_bytes", "must be a positive number of bytes")
	}
	for _, n := range []struct {
		key   string
		lines int
	}{{"limits.preserve_head_lines", l.PreserveHeadLines}, {"limits.preserve_tail_lines", l.PreserveTailLines}} {
		if n.lines < 0 || n.lines > MaxPreserveLines {
			return bad(n.key, fmt.Sprintf("%d is out of range: a number of lines from 0 to %d", n.lines, MaxPreserveLines))
		}
	}
	if !oneOf(p.Secrets.Action, ActionRedact, ActionExclude, ActionFail) {
		return bad("secrets.action", fmt.Sprintf("%s is not a secret action; use redact, exclude or fail", safetext.Quote(p.Secrets.Action)))
	}
	if p.Secrets.History == "" {
		p.Secrets.History = "fail"
	}
	if !oneOf(p.Secrets.History, "fail", "warn") {
		return bad("secrets.history", fmt.Sprintf("%s is not allowed; use fail or warn", safetext.Quote(p.Secrets.History)))
	}
	switch p.Secrets.HistoryUnavailable {
	case "", "fail":
		p.Secrets.HistoryUnavailable = "" // the default, elided from the digest
	case "warn":
	default:
		return bad("secrets.history_unavailable", fmt.Sprintf("%s is not allowed; use fail or warn", safetext.Quote(p.Secrets.HistoryUnavailable)))
	}
	if lookup(root, "secrets.history_max_blob_bytes") != nil && p.Secrets.HistoryMaxBlobBytes <= 0 {
		return bad("secrets.history_max_blob_bytes", "must be a positive number of bytes")
	}
	if p.Secrets.HistoryMaxBlobBytes == DefaultHistoryMaxBlobBytes {
		p.Secrets.HistoryMaxBlobBytes = 0 // the default, elided from the digest
	}
	switch p.ConfigFrom {
	case "", ConfigFromBase:
		p.ConfigFrom = "" // the default, elided from the digest
	case ConfigFromHead:
	default:
		return bad("config_from", fmt.Sprintf("%s is not allowed; use base or head", safetext.Quote(p.ConfigFrom)))
	}
	seen := map[string]bool{}
	for i, d := range p.Egress.Destinations {
		key := fmt.Sprintf("egress.destinations[%d]", i)
		if d.Name == "" {
			return &Error{File: name, Line: seqLine(root, "egress.destinations", i), Key: key + ".name", Msg: "a destination needs a name"}
		}
		if seen[d.Name] {
			return &Error{File: name, Line: seqLine(root, "egress.destinations", i), Key: key + ".name", Msg: fmt.Sprintf("destination %s is listed twice", safetext.Quote(d.Name))}
		}
		seen[d.Name] = true
		if d.MaxChars < 0 || d.MaxTokens < 0 {
			return &Error{File: name, Line: seqLine(root, "egress.destinations", i), Key: key, Msg: "limits must not be negative"}
		}
	}
	// An empty list would turn every failing check into a warning without
	// saying so: it must be written out as [none].
	if n := lookup(root, "fail_on"); n != nil && len(p.FailOn) == 0 {
		return bad("fail_on", "is empty, which would let every failing check pass; list the conditions to fail on ("+
			strings.Join(Default().FailOn, ", ")+"; the default when the key is absent), or write fail_on: [none] to only warn")
	}
	for i, f := range p.FailOn {
		if f == FailNone && len(p.FailOn) > 1 {
			return &Error{File: name, Line: seqLine(root, "fail_on", i), Key: fmt.Sprintf("fail_on[%d]", i),
				Msg: "none cannot be combined with other conditions"}
		}
		if !oneOf(f, FailSecretUnredacted, FailSecretInHistory, FailForbiddenContent, FailOverLimit, FailNone) {
			return &Error{File: name, Line: seqLine(root, "fail_on", i), Key: fmt.Sprintf("fail_on[%d]", i),
				Msg: fmt.Sprintf("%s is not a condition; use secret_unredacted, secret_in_history, forbidden_content, over_limit, or none alone", safetext.Quote(f))}
		}
	}
	return nil
}

// CheckGlob reports whether a doublestar glob is well formed.
func CheckGlob(glob string) error {
	if strings.TrimSpace(glob) == "" {
		return errors.New("empty glob")
	}
	if !doublestar.ValidatePattern(glob) {
		return fmt.Errorf("bad glob %s (check brackets and braces)", safetext.Quote(glob))
	}
	return nil
}

// FailsOn reports whether the policy turns a condition into a failing verdict.
func (p *Policy) FailsOn(cond string) bool {
	for _, f := range p.FailOn {
		if f == cond {
			return true
		}
	}
	return false
}

// Token budgets of a change pack (seed 002: 2–6k tokens for routine
// changes, 10–20k for large ones).
const (
	MinAutoTokens  = 6000
	MaxAutoTokens  = 20000
	MaxTokenBudget = 10_000_000
)

// TokenBudget is the token budget of a pack whose diff is diffTokens long:
// limits.max_tokens when set, else 4,000 plus twice the diff, kept within
// 6,000 and 20,000 — room for the whole diff of a routine change and about
// as much again of the code around it.
func (p *Policy) TokenBudget(diffTokens int) int {
	if p.Limits.MaxTokens > 0 {
		return p.Limits.MaxTokens
	}
	return min(max(4000+2*diffTokens, MinAutoTokens), MaxAutoTokens)
}

// TierLimit is the tier's character ceiling, 0 when no tier is set.
func (p *Policy) TierLimit() int { return TierChars[p.Pack.Tier] }

// Normalized is the canonical JSON form the digest is taken of.
func (p *Policy) Normalized() []byte {
	b, err := json.Marshal(p)
	if err != nil { // a Policy always marshals
		panic(err)
	}
	return b
}

// Digest is the sha256 of the normalized policy, as "sha256:<hex>".
func (p *Policy) Digest() string {
	sum := sha256.Sum256(p.Normalized())
	return "sha256:" + hex.EncodeToString(sum[:])
}

// YAML renders the effective policy.
func (p *Policy) YAML() []byte {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(p); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

func oneOf(s string, opts ...string) bool {
	for _, o := range opts {
		if s == o {
			return true
		}
	}
	return false
}

// HeadConfig reports whether the policy lets a change's own configuration
// apply (config_from: head).
func (p *Policy) HeadConfig() bool { return p.ConfigFrom == ConfigFromHead }

// HistoryUnavailableFails reports whether a per-commit scan that could not
// run fails the verdict (secrets.history_unavailable, default fail).
func (p *Policy) HistoryUnavailableFails() bool { return p.Secrets.HistoryUnavailable != "warn" }

// HistoryBlobLimit is the largest blob the per-commit scan reads
// (secrets.history_max_blob_bytes, default DefaultHistoryMaxBlobBytes).
func (p *Policy) HistoryBlobLimit() int64 {
	if p.Secrets.HistoryMaxBlobBytes > 0 {
		return p.Secrets.HistoryMaxBlobBytes
	}
	return DefaultHistoryMaxBlobBytes
}
