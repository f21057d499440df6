package pack

import (
	"context"

	"github.com/ctxpack/ctxpack/lang"
)

// SchemaVersion is the version of the pack JSON shape (pack.schema.json).
const SchemaVersion = 1

// FileType is seed 000's FileType.
type FileType string

const (
	TypeText    FileType = "text"
	TypeBinary  FileType = "binary"
	TypeImage   FileType = "image"
	TypeData    FileType = "data"
	TypeUnknown FileType = "unknown"
)

// Category is seed 000's FileCategory.
type Category string

const (
	CatConfig        Category = "config"
	CatEntrypoint    Category = "entrypoint"
	CatAuth          Category = "auth"
	CatAPI           Category = "api"
	CatDatabase      Category = "database"
	CatTest          Category = "test"
	CatDocumentation Category = "documentation"
	CatBuild         Category = "build"
	CatDependency    Category = "dependency"
	CatSource        Category = "source"
	CatOther         Category = "other"
)

// Reason is why a file was excluded: seed 000's ExclusionReason plus the
// reasons a git snapshot and a policy add.
type Reason string

const (
	ReasonCredentials   Reason = "credentials"
	ReasonBinary        Reason = "binary"
	ReasonSizeLimit     Reason = "size_limit"
	ReasonPatternMatch  Reason = "pattern_match"
	ReasonDependencyDir Reason = "dependency_dir"
	ReasonBuildOutput   Reason = "build_output"
	ReasonCache         Reason = "cache"
	ReasonSymlink       Reason = "symlink"
	ReasonSubmodule     Reason = "submodule"
	ReasonPolicy        Reason = "policy"
	ReasonDeleted       Reason = "deleted"
	// ReasonDiffOnly: a changed file whose change is in the pack as its
	// diff, with none of its other lines.
	ReasonDiffOnly Reason = "diff_only"
	// ReasonBoilerplate: an unchanged licence, changelog, lockfile, author
	// list or generated file, which a change pack never carries.
	ReasonBoilerplate Reason = "boilerplate"
	// ReasonNotCheckedOut is a file of a sparse checkout outside its sparse
	// set: in the commit, not in the work tree a work-tree pack describes.
	ReasonNotCheckedOut Reason = "not_checked_out"
	// ReasonNotFetched is a file of a partial clone whose content is not in
	// the clone and could not be fetched from its promisor remote.
	ReasonNotFetched Reason = "not_fetched"
	// ReasonUnscanned is a change whose diff shows lines of a version of
	// the file that could not be secret-scanned whole (a change listed by
	// GitHub's API, whose old side is not in the checkout), or lines that
	// are not those of the versions scanned.
	ReasonUnscanned Reason = "unscanned"
)

// Unavailable is the error a File's Read returns when the source cannot
// provide the content: the file is listed and excluded with Reason.
type Unavailable struct {
	Reason Reason
	// Detail says why, and what to do about it.
	Detail string
}

func (e *Unavailable) Error() string { return string(e.Reason) + ": " + e.Detail }

// Pack is a Full or Summary pack; fields a type does not use are omitted.
// Field order here is the order of the serialized JSON.
type Pack struct {
	SchemaVersion int    `json:"schema_version"`
	PackID        string `json:"pack_id"`
	Type          string `json:"type"`
	Source        Source `json:"source"`
	// Intent is what the change is for (commit and range packs, and any
	// pack given a goal or task).
	Intent    *Intent      `json:"intent,omitempty"`
	Manifest  Manifest     `json:"manifest"`
	FileIndex []IndexEntry `json:"file_index"`
	Changes   []Change     `json:"changes"`
	// Full pack: key files and the other included contents. A whole-tree
	// pack sends each included file once; a change pack may send several
	// regions of one file, never overlapping, each its own item.
	KeyFiles []KeyFile `json:"key_files,omitzero"`
	Contents []Item    `json:"contents,omitzero"`
	// Summary pack (seed 000 SummaryPack).
	RepoSummary     *RepoSummary     `json:"repo_summary,omitzero"`
	KeyFilesSummary []KeyFileSummary `json:"key_files_summary,omitzero"`
	Entrypoints     []Entrypoint     `json:"entrypoints,omitzero"`
	RiskHotspots    []RiskHotspot    `json:"risk_hotspots,omitzero"`
	Budget          Budget           `json:"budget"`
	Metadata        Metadata         `json:"metadata"`
}

// Source says what repository state the pack describes.
type Source struct {
	Repository string `json:"repository"`
	// Kind is git or plain (a directory that is not a git repository).
	Kind    string `json:"kind"`
	Trigger string `json:"trigger"`
	Head    string `json:"head,omitempty"`
	Base    string `json:"base,omitempty"`
	Tree    string `json:"tree,omitempty"`
	Ref     string `json:"ref,omitempty"`
	// Dirty is true when a worktree pack holds uncommitted changes.
	Dirty bool `json:"dirty,omitempty"`
	// Scope is what the snapshot lists of the head tree: every file
	// (policy.ScopeTree) or the change scope (policy.ScopeChange).
	Scope string `json:"scope"`
	// Config says whose configuration a commit, range or push pack applied
	// (nil for a work-tree pack, which applies the work tree's).
	Config *ConfigOrigin `json:"config,omitempty"`
}

// ConfigOrigin says where a pack's configuration (.ctxpack.yml, the gitleaks
// config and .gitleaksignore) was read: the base of the change, never what
// the change brings, unless the base's policy says config_from: head.
type ConfigOrigin struct {
	// From is base or head.
	From string `json:"from"`
	// Commit is the commit read; empty when there is none (the base of a
	// root commit): the built-in defaults applied.
	Commit string `json:"commit,omitempty"`
	// OperatorPolicy is true when a policy file named by the operator
	// (--policy) replaced the repository's.
	OperatorPolicy bool `json:"operator_policy,omitempty"`
	// Changed lists the configuration files the change edits.
	Changed []string `json:"changed,omitempty"`
	// Note says what that means, e.g. "policy changed in this change; the
	// base's applies".
	Note string `json:"note,omitempty"`
}

// Manifest and Dependency are seed 000's, derived by package lang.
type (
	Manifest   = lang.Manifest
	Dependency = lang.Dependency
)

// IndexEntry is seed 000's FileIndexEntry.
type IndexEntry struct {
	Path     string   `json:"path"`
	Type     FileType `json:"type"`
	Category Category `json:"category"`
	// SizeBytes is the file's size; absent when OriginalWithheld is set. A
	// condensed directory entry sums the sizes its files publish.
	SizeBytes *int64 `json:"size_bytes,omitempty"`
	// OriginalWithheld says why nothing derived from the file's original
	// bytes alone (size, digest, blob id) is published: WithheldSecret or
	// WithheldCredentials.
	OriginalWithheld string `json:"original_withheld,omitempty"`
	Included         bool   `json:"included"`
	ExclusionReason  Reason `json:"exclusion_reason,omitempty"`
	// Detail says which rule excluded the file (a pattern, a limit).
	Detail string `json:"detail,omitempty"`
	// Files is set on a condensed directory entry of a Summary pack (a path
	// ending in "/"): the number of files it stands for.
	Files int `json:"files,omitempty"`
}

// Change is one changed file of the commit or range.
type Change struct {
	Path          string `json:"path"`
	Status        string `json:"status"`
	OldPath       string `json:"old_path,omitempty"`
	Added         int    `json:"added"`
	Deleted       int    `json:"deleted"`
	Binary        bool   `json:"binary,omitempty"`
	Diff          string `json:"diff,omitempty"`
	DiffTruncated bool   `json:"diff_truncated,omitempty"`
	// DiffInContent marks an added file whose diff is left out because its
	// content item carries the same text (Full packs).
	DiffInContent bool `json:"diff_in_content,omitempty"`
	// DiffWithheld says why the diff is not in the pack (excluded file).
	DiffWithheld Reason `json:"diff_withheld,omitempty"`
	// OriginalWithheld is set when the file (either side) holds a secret:
	// the diff then has no "index" line (it names both blob ids).
	OriginalWithheld string      `json:"original_withheld,omitempty"`
	Redactions       []Redaction `json:"redactions,omitempty"`
	// OmittedHunks stand for the hunks the budget could not hold.
	OmittedHunks []HunkSummary `json:"omitted_hunks,omitempty"`
	// Old is the file before the change, for the builder to scan what the
	// diff shows of it (DiffSecrets): set by a source that can read it, nil
	// for an added file. The diff of a change whose old side the builder
	// cannot read is withheld (ReasonUnscanned). Never in a pack.
	Old *OldSide `json:"-"`
}

// OldSide is the version of a changed file before the change, whose lines
// are the removed and context lines of its diff.
type OldSide struct {
	// Blob is its git blob id.
	Blob string
	Size int64
	// Read returns its bytes; an error is a *Unavailable when the source
	// cannot provide them.
	Read func(ctx context.Context) ([]byte, error)
}

// String names the version by its blob id: a change prints the same from
// run to run.
func (o *OldSide) String() string { return "blob " + o.Blob }

// Item is the content of one file as sent (seed 000's FileContent extended).
type Item struct {
	ID         string   `json:"id"`
	Path       string   `json:"path"`
	Role       string   `json:"role"`
	Category   Category `json:"category,omitempty"`
	Importance string   `json:"importance,omitempty"`
	Encoding   string   `json:"encoding"`
	Content    string   `json:"content"`
	SHA256     string   `json:"sha256"`
	// Blob and OriginalSizeBytes are the git blob id and size of the whole
	// original file; both are absent when OriginalWithheld is set.
	Blob              string      `json:"blob,omitempty"`
	Truncated         bool        `json:"truncated"`
	OriginalSizeBytes *int64      `json:"original_size_bytes,omitempty"`
	OriginalWithheld  string      `json:"original_withheld,omitempty"`
	Redactions        []Redaction `json:"redactions"`
	// StartLine and EndLine are the file lines the content is (the id says
	// the same); a region of a larger file has truncated set.
	StartLine int `json:"start_line"`
	EndLine   int `json:"end_line"`
	// Symbol and SymbolType name the definition a region is (seed 003).
	Symbol     string `json:"symbol,omitempty"`
	SymbolType string `json:"type,omitempty"`
	// Imports are the file's import specifiers as written.
	Imports []string `json:"imports,omitempty"`
	// Relationship says how the item relates to the change (changed, calls,
	// called_by, imports, imported_by, test_of, mentioned) and Distance how
	// far (0 the change itself, 1 the same package or a direct relation, 2
	// elsewhere): set on every item with a relationship, absent on others.
	Relationship []string `json:"relationship,omitempty"`
	Distance     *int     `json:"distance,omitempty"`
	// Score ranks the items of a change pack: 1 for the most valuable,
	// falling with the order of value.
	Score float64 `json:"score,omitempty"`
}

// KeyFile is seed 000's KeyFile: an Item with a category and importance.
type KeyFile = Item

// Why a file's original size, digest and blob id are withheld: each is a
// function of the original bytes alone, so anyone could confirm a guess of
// a short secret in them offline.
const (
	// WithheldSecret: the secret scan found a secret in the file (in its
	// content, any region of it, or its diff), whatever the secret policy
	// then did with it.
	WithheldSecret = "secret"
	// WithheldCredentials: the file is excluded as credentials (by name or
	// pattern), so its whole content is presumed secret.
	WithheldCredentials = "credentials"
	// WithheldSymlink: the file is a symlink. Its target is never read,
	// scanned or sent, so nothing derived from it (its blob id, its size:
	// the target's length) is described either.
	WithheldSymlink = "symlink"
)

// Redaction records a replaced secret: where and which rule, never the value.
type Redaction struct {
	Line   int    `json:"line"`
	RuleID string `json:"rule_id"`
}

// Roles of content items.
const (
	RolePrimary = "primary"
	RoleRelated = "related"
)

// Budget says how much of the ceiling the pack uses and what was cut.
type Budget struct {
	MaxChars        int    `json:"max_chars"`
	UsedChars       int    `json:"used_chars"`
	MaxContentBytes int64  `json:"max_content_bytes"`
	ContentBytes    int64  `json:"content_bytes"`
	Truncated       bool   `json:"truncated"`
	DroppedItems    int    `json:"dropped_items"`
	EstimatedTokens int    `json:"estimated_tokens"`
	TokenEncoding   string `json:"token_encoding"`
	// MaxTokens is a change pack's token budget (limits.max_tokens, or
	// sized to the change), or the explicit limits.max_tokens any other
	// pack was fitted to.
	MaxTokens int `json:"max_tokens,omitempty"`
	// Cut lists what the budget left out (hunks are summarised in their
	// change's omitted_hunks), up to 20 entries and a count of the rest.
	Cut []string `json:"cut,omitempty"`
}

// Metadata is seed 000's PackMetadata plus the exclusion statistics and
// encoding notes.
type Metadata struct {
	PackType           string         `json:"pack_type"`
	SelectionReason    string         `json:"selection_reason"`
	CreatedAt          string         `json:"created_at"`
	SourceRoot         string         `json:"source_root"`
	TotalFilesScanned  int            `json:"total_files_scanned"`
	FilesIncluded      int            `json:"files_included"`
	FilesExcluded      int            `json:"files_excluded"`
	TotalContentBytes  int64          `json:"total_content_bytes"`
	TruncationApplied  bool           `json:"truncation_applied"`
	TruncatedFiles     int            `json:"truncated_files"`
	ExclusionStats     ExclusionStats `json:"exclusion_stats"`
	ExclusionsByReason map[Reason]int `json:"exclusions_by_reason"`
	Encodings          []EncodingNote `json:"encodings"`
	Totals             Totals         `json:"totals"`
	DirectoryTree      *DirNode       `json:"directory_tree,omitempty"`
	// IndexCondensed says how a Summary pack's file index was condensed by
	// directory to fit its limits (empty when every file has its own entry).
	IndexCondensed string `json:"index_condensed,omitempty"`
	ToolVersion    string `json:"tool_version"`
}

// ExclusionStats is seed 000's exclusion_stats.
type ExclusionStats struct {
	ByPattern     int `json:"by_pattern"`
	BySize        int `json:"by_size"`
	ByBinary      int `json:"by_binary"`
	ByCredentials int `json:"by_credentials"`
}

// EncodingNote records a file that was not plain UTF-8.
type EncodingNote struct {
	Path     string `json:"path"`
	Encoding string `json:"encoding"`
	Note     string `json:"note"`
}

// Totals are seed 000's snapshot totals.
type Totals struct {
	Files       int   `json:"total_files"`
	Directories int   `json:"total_directories"`
	SizeBytes   int64 `json:"total_size_bytes"`
}

// DirNode is seed 000's DirectoryNode, condensed: directories only, each with
// the number and size of the files directly in it (file_index lists the
// files), at most maxTreeDepth levels deep.
type DirNode struct {
	Name      string     `json:"name"`
	Path      string     `json:"path"`
	Files     int        `json:"files"`
	SizeBytes int64      `json:"size_bytes"`
	Children  []*DirNode `json:"children,omitempty"`
	// Folded is set on a directory at the depth cap (maxTreeDepth) that has
	// deeper directories: its files and size_bytes count its whole subtree.
	Folded bool `json:"folded,omitempty"`
}

// RepoSummary is seed 000's RepoSummary.
type RepoSummary struct {
	Description         string   `json:"description"`
	ArchitecturePattern string   `json:"architecture_pattern"`
	KeyTechnologies     []string `json:"key_technologies"`
	NotablePatterns     []string `json:"notable_patterns"`
	PotentialConcerns   []string `json:"potential_concerns"`
}

// KeyFileSummary is seed 000's KeyFileSummary.
type KeyFileSummary struct {
	Path         string   `json:"path"`
	Category     Category `json:"category"`
	Summary      string   `json:"summary"`
	Exports      []string `json:"exports"`
	Dependencies []string `json:"dependencies"`
	NotableCode  []string `json:"notable_code"`
}

// Entrypoint is seed 000's EntrypointSummary.
type Entrypoint struct {
	Path             string   `json:"path"`
	Type             string   `json:"type"`
	Description      string   `json:"description"`
	RoutesOrCommands []string `json:"routes_or_commands,omitempty"`
}

// RiskHotspot is seed 000's RiskHotspot.
type RiskHotspot struct {
	Path        string   `json:"path"`
	RiskType    string   `json:"risk_type"`
	Description string   `json:"description"`
	Indicators  []string `json:"indicators"`
}
