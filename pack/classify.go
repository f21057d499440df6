package pack

import (
	"bytes"
	"github.com/ctxpack/ctxpack/lang"
	"path"
	"strings"
	"unicode/utf8"
)

var imageExts = set(".png", ".jpg", ".jpeg", ".gif", ".ico", ".svg", ".bmp", ".webp", ".tif", ".tiff", ".avif", ".heic")
var dataExts = set(".json", ".csv", ".tsv", ".xml", ".yaml", ".yml", ".toml", ".parquet", ".avro", ".ndjson", ".jsonl", ".sql", ".db", ".sqlite", ".sqlite3", ".proto")
var binaryExts = set(".exe", ".dll", ".so", ".dylib", ".wasm", ".mp4", ".mp3", ".pdf", ".zip", ".gz", ".tar", ".tgz", ".bz2", ".xz", ".7z", ".jar", ".class", ".o", ".a", ".bin", ".woff", ".woff2", ".ttf", ".otf", ".eot", ".pyc", ".wav", ".ogg", ".mov", ".avi")

func set(items ...string) map[string]bool {
	m := make(map[string]bool, len(items))
	for _, it := range items {
		m[it] = true
	}
	return m
}

// ext is the lower-cased extension of a path, with its dot.
func ext(p string) string { return strings.ToLower(path.Ext(p)) }

// typeByName guesses the FileType from the name alone.
func typeByName(p string) FileType {
	e := ext(p)
	switch {
	case imageExts[e]:
		return TypeImage
	case binaryExts[e]:
		return TypeBinary
	case dataExts[e]:
		return TypeData
	}
	return TypeText
}

// sniffLen is how much of a file the binary sniff looks at.
const sniffLen = 8 << 10

// Encoding names recorded in items and notes.
const (
	EncUTF8    = "utf-8"
	EncUTF16LE = "utf-16le"
	EncUTF16BE = "utf-16be"
	EncLatin1  = "latin-1"
)

// sniff decides from content whether data is text and in which encoding:
// UTF-16 with a BOM is text; otherwise a NUL byte or more than 10% control
// characters in the first 8 KiB means binary; valid UTF-8 is utf-8; anything
// else is decoded as Latin-1 (seed 000's fallback).
func sniff(data []byte) (binary bool, encoding string) {
	binary, encoding, _ = sniffValid(data)
	return binary, encoding
}

// sniffValid is sniff, and whether data is valid UTF-8 throughout (its
// text is data as it is).
func sniffValid(data []byte) (binary bool, encoding string, valid bool) {
	switch {
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}):
		return false, EncUTF16LE, false
	case bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		return false, EncUTF16BE, false
	}
	head := data
	if len(head) > sniffLen {
		head = head[:sniffLen]
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return true, "", false
	}
	control := 0
	for _, b := range head {
		if b < 0x20 && b != '\n' && b != '\r' && b != '\t' && b != '\f' && b != '\b' && b != 0x1b {
			control++
		}
	}
	if len(head) > 0 && control*10 > len(head) {
		return true, "", false
	}
	if utf8.Valid(data) {
		return false, EncUTF8, true
	}
	// Invalid UTF-8 cut at the 8 KiB boundary is still UTF-8.
	if len(data) > sniffLen && utf8.Valid(data[:lastRuneStart(data)]) {
		return false, EncUTF8, false
	}
	return false, EncLatin1, false
}

func lastRuneStart(data []byte) int {
	for i := len(data) - 1; i >= 0 && i >= len(data)-utf8.UTFMax; i-- {
		if utf8.RuneStart(data[i]) {
			return i
		}
	}
	return len(data)
}

// Importance levels of key files (seed 000).
const (
	ImportanceCritical = "critical"
	ImportanceHigh     = "high"
	ImportanceMedium   = "medium"
)

var configNames = set("package.json", "tsconfig.json", "pyproject.toml", "go.mod", "cargo.toml",
	"pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle", "gemfile", "composer.json",
	"requirements.txt", "setup.py", "setup.cfg", "makefile", "dockerfile", "docker-compose.yml",
	"docker-compose.yaml", "compose.yaml", "compose.yml", ".ctxpack.yml", "deno.json",
	"vite.config.ts", "vite.config.js", "webpack.config.js", "next.config.js", "tox.ini",
	"cmakelists.txt", "mix.exs", "pubspec.yaml", "action.yml", "action.yaml")

var docExts = set(".md", ".markdown", ".rst", ".adoc", ".txt")

var sourceExts = set(".go", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".py", ".rs", ".java",
	".kt", ".kts", ".scala", ".rb", ".php", ".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".swift",
	".m", ".sh", ".bash", ".zsh", ".ps1", ".lua", ".pl", ".r", ".dart", ".ex", ".exs", ".erl",
	".hs", ".ml", ".clj", ".vue", ".svelte", ".sql", ".html", ".css", ".scss", ".sass", ".less")

// keyRule is one row of seed 000's key-file table, in category-importance order.
type keyRule struct {
	category   Category
	importance string
	keywords   []string // substrings of the lower-cased base name
}

var keyRules = []keyRule{
	{CatAuth, ImportanceHigh, []string{"auth", "login", "session", "jwt"}},
	{CatAuth, ImportanceHigh, []string{"permission", "rbac", "acl"}}, // the table's "Security" row
	{CatAPI, ImportanceHigh, []string{"route", "controller", "handler", "api"}},
	{CatDatabase, ImportanceHigh, []string{"model", "schema", "migration"}},
}

// categoryRank orders categories for key-file selection: the table's order.
var categoryRank = map[Category]int{CatConfig: 0, CatEntrypoint: 1, CatAuth: 2, CatAPI: 3, CatDatabase: 4, CatDocumentation: 5}

// classify returns a file's category and, for a key file, its importance.
func classify(p string, typ FileType) (Category, string) {
	base := strings.ToLower(path.Base(p))
	lower := strings.ToLower(p)
	stem := strings.TrimSuffix(base, path.Ext(base))
	e := ext(p)
	if reason, _, ok := matchDefault(p); ok {
		switch reason {
		case ReasonDependencyDir:
			return CatDependency, ""
		case ReasonBuildOutput:
			return CatBuild, ""
		}
	}
	if configNames[base] {
		return CatConfig, ImportanceCritical
	}
	if lang.IsTestPath(p) {
		return CatTest, ""
	}
	if (stem == "main" || stem == "index" || stem == "app" || stem == "server") && sourceExts[e] {
		return CatEntrypoint, ImportanceCritical
	}
	if typ == TypeText || typ == TypeData {
		if docExts[e] || strings.HasPrefix(lower, "docs/") || strings.HasPrefix(base, "readme") {
			if strings.HasPrefix(base, "readme") && !strings.Contains(p, "/") {
				return CatDocumentation, ImportanceMedium
			}
			return CatDocumentation, ""
		}
	}
	if sourceExts[e] || typ == TypeData {
		for _, r := range keyRules {
			for _, kw := range r.keywords {
				if strings.Contains(stem, kw) {
					return r.category, r.importance
				}
			}
		}
		if sourceExts[e] {
			return CatSource, ""
		}
		if typ == TypeData && (e == ".yml" || e == ".yaml" || e == ".toml" || e == ".json" || e == ".ini" || e == ".cfg") {
			return CatConfig, ""
		}
	}
	if e == ".ini" || e == ".cfg" || e == ".conf" || strings.HasPrefix(base, ".") {
		return CatConfig, ""
	}
	return CatOther, ""
}

var importanceRank = map[string]int{ImportanceCritical: 0, ImportanceHigh: 1, ImportanceMedium: 2}
