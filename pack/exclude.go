package pack

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/ctxpack/ctxpack/policy"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// patternGroup is one of seed 000's default exclusion groups.
type patternGroup struct {
	name     string
	reason   Reason
	patterns []string
}

// defaultGroups are seed 000's default exclusion patterns, verbatim, in the
// order they are tried. The first match gives the reason.
var defaultGroups = []patternGroup{
	{"version_control", ReasonPatternMatch, []string{
		"**/.git/**", "**/.svn/**", "**/.hg/**",
	}},
	{"credentials", ReasonCredentials, []string{
		"**/*.pem", "**/*.key", "**/*.crt", "**/*.p12", "**/.env*", "**/credentials*",
		"**/secrets*", "**/*_secret*", "**/*_token*", "**/*.keystore",
	}},
	{"dependencies", ReasonDependencyDir, []string{
		"**/node_modules/**", "**/vendor/**", "**/.venv/**", "**/venv/**", "**/env/**",
		"**/__pypackages__/**", "**/packages/*/node_modules/**",
	}},
	{"build_outputs", ReasonBuildOutput, []string{
		"**/dist/**", "**/build/**", "**/out/**", "**/target/**", "**/.next/**",
		"**/.nuxt/**", "**/coverage/**",
	}},
	{"caches", ReasonCache, []string{
		"**/.cache/**", "**/__pycache__/**", "**/*.pyc", "**/.pytest_cache/**",
		"**/.eslintcache", "**/.tsbuildinfo",
	}},
	{"large_data", ReasonPatternMatch, []string{
		"**/*.sql", "**/*.db", "**/*.sqlite*", "**/*.log", "**/logs/**",
	}},
	{"binaries", ReasonBinary, []string{
		"**/*.exe", "**/*.dll", "**/*.so", "**/*.dylib", "**/*.wasm", "**/*.png",
		"**/*.jpg", "**/*.jpeg", "**/*.gif", "**/*.ico", "**/*.svg", "**/*.mp4",
		"**/*.mp3", "**/*.pdf", "**/*.zip", "**/*.tar*", "**/*.gz",
	}},
}

// DefaultPatterns returns the default exclusion patterns with their reasons,
// for the audit and for documentation.
func DefaultPatterns() map[string]Reason {
	out := map[string]Reason{}
	for _, g := range defaultGroups {
		for _, p := range g.patterns {
			out[p] = g.reason
		}
	}
	return out
}

// defaultLiterals holds, for each default pattern (by group and position),
// its longest run of literal characters without '/': a path the pattern
// matches contains it (glob literals match themselves, within one path
// segment), so a path without it is not tried against the pattern at all —
// most paths skip most of the 55 patterns with one substring search each.
var defaultLiterals = func() [][]string {
	out := make([][]string, len(defaultGroups))
	for i, g := range defaultGroups {
		for _, pat := range g.patterns {
			out[i] = append(out[i], longestLiteral(pat))
		}
	}
	return out
}()

// longestLiteral is pat's longest run of bytes that are neither glob
// syntax nor '/'; "" for a pattern with alternatives ({a,b}).
func longestLiteral(pat string) string {
	if strings.ContainsAny(pat, "{}") {
		return ""
	}
	best, start := "", 0
	for i := 0; i <= len(pat); i++ {
		if i == len(pat) || strings.IndexByte("*?[]\\/!", pat[i]) >= 0 {
			if i-start > len(best) {
				best = pat[start:i]
			}
			start = i + 1
		}
	}
	return best
}

// matchDefault returns the reason and pattern of the first default group that
// matches p.
func matchDefault(p string) (Reason, string, bool) {
	for i, g := range defaultGroups {
		for j, pat := range g.patterns {
			if !strings.Contains(p, defaultLiterals[i][j]) {
				continue
			}
			if doublestar.MatchUnvalidated(pat, p) {
				return g.reason, g.name + ": " + pat, true
			}
		}
	}
	return "", "", false
}

// IgnoreFileName is the gitignore-syntax file of paths never to pack.
const IgnoreFileName = ".ctxpackignore"

// ignoreMatcher applies .ctxpackignore files (gitignore syntax, nested files
// scoped to their directory, later and deeper patterns winning).
type ignoreMatcher struct {
	m gitignore.Matcher
}

// newIgnoreMatcher reads every .ctxpackignore of the snapshot with read.
func newIgnoreMatcher(sources map[string][]byte) *ignoreMatcher {
	var dirs []string
	for p := range sources {
		dirs = append(dirs, p)
	}
	sortByDepth(dirs)
	var ps []gitignore.Pattern
	for _, p := range dirs {
		dir := path.Dir(p)
		var domain []string
		if dir != "." {
			domain = strings.Split(dir, "/")
		}
		for _, line := range strings.Split(string(sources[p]), "\n") {
			line = strings.TrimSuffix(line, "\r")
			if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
				continue
			}
			ps = append(ps, gitignore.ParsePattern(line, domain))
		}
	}
	if len(ps) == 0 {
		return nil
	}
	return &ignoreMatcher{m: gitignore.NewMatcher(ps)}
}

// Match reports whether the file at p (or one of its directories) is ignored.
func (im *ignoreMatcher) Match(p string) bool {
	if im == nil {
		return false
	}
	parts := strings.Split(p, "/")
	for i := 1; i < len(parts); i++ { // a matched directory ignores everything in it
		if im.m.Match(parts[:i], true) {
			return true
		}
	}
	return im.m.Match(parts, false)
}

// sortByDepth orders paths shallow first, then by name.
func sortByDepth(ps []string) {
	depth := func(s string) int { return strings.Count(s, "/") }
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0; j-- {
			a, b := ps[j-1], ps[j]
			if depth(a) < depth(b) || (depth(a) == depth(b) && a <= b) {
				break
			}
			ps[j-1], ps[j] = b, a
		}
	}
}

// matchAny returns the first glob of globs matching p.
func matchAny(globs []string, p string) (string, bool) {
	for _, g := range globs {
		if doublestar.MatchUnvalidated(g, p) {
			return g, true
		}
	}
	return "", false
}

// Excluder applies every exclusion rule that needs only a path, in order:
// egress.forbid, seed 000's defaults, credential-file signatures,
// .ctxpackignore, then the policy's exclude and include globs. The builder and
// the audit share it.
type Excluder struct {
	pol       *policy.Policy
	sensitive func(string) (string, bool)
	ignore    *ignoreMatcher
}

// NewExcluder builds an Excluder; ignoreSources maps each .ctxpackignore path
// to its content.
func NewExcluder(pol *policy.Policy, sensitive func(string) (string, bool), ignoreSources map[string][]byte) *Excluder {
	return &Excluder{pol: pol, sensitive: sensitive, ignore: newIgnoreMatcher(ignoreSources)}
}

// Reason returns why p may not be packed, and the rule; "" when it may.
func (x *Excluder) Reason(p string) (Reason, string) {
	if g, ok := matchAny(x.pol.Egress.Forbid, p); ok {
		return ReasonPolicy, "egress.forbid: " + g
	}
	if r, pat, ok := matchDefault(p); ok {
		return r, pat
	}
	if x.sensitive != nil {
		if sig, ok := x.sensitive(p); ok {
			return ReasonCredentials, "sensitive file: " + sig
		}
	}
	if x.ignore.Match(p) {
		return ReasonPatternMatch, IgnoreFileName
	}
	if g, ok := matchAny(x.pol.Pack.Exclude, p); ok {
		return ReasonPatternMatch, "exclude: " + g
	}
	if len(x.pol.Pack.Include) > 0 {
		if _, ok := matchAny(x.pol.Pack.Include, p); !ok {
			return ReasonPatternMatch, "not matched by include globs"
		}
	}
	return "", ""
}

// IgnoreSources reads every .ctxpackignore of a snapshot.
func IgnoreSources(ctx context.Context, files []File) (map[string][]byte, error) {
	sources := map[string][]byte{}
	for _, f := range files {
		if path.Base(f.Path) != IgnoreFileName || f.Read == nil {
			continue
		}
		data, err := f.Read(ctx)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f.Path, err)
		}
		sources[f.Path] = data
	}
	return sources, nil
}
