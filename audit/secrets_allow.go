package audit

import (
	"fmt"
	"slices"

	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/regexp"
)

// gitleaks' default config allowlists paths globally: lockfiles
// (package-lock.json, poetry.lock, Pipfile.lock, yarn.lock, …), go.mod and
// go.sum, gradlew and mvnw, vendored jquery*/bootstrap*/angular* scripts,
// node_modules, images, fonts, and gitleaks.toml itself. A finding in such a
// path is never reported, whichever rule makes it. That is right for a
// scanner of repositories; it is wrong for a scanner of what leaves one: a
// token in a registry URL of package-lock.json or a password in gradlew is
// sent like any other. So every path condition that comes from the default
// config (global or a rule's, when it is a path-only OR condition) is taken
// out; the rest of those allowlists (regexes, stop words) stays, and so does
// every path condition a repository's own .gitleaks.toml adds — its owner's
// decision. The false positives this lets in (checksums of lockfiles and
// go.sum) are dropped by what they are, not where they are (nonSecret).

// dropDefaultPaths returns cfg with the default path conditions taken out of
// its OR allowlists; an allowlist left with no condition is dropped. An AND
// allowlist keeps its paths: there they narrow a content condition.
func dropDefaultPaths(cfg config.Config, defaults map[string]bool) (config.Config, error) {
	var err error
	if cfg.Allowlists, err = withoutPaths(cfg.Allowlists, defaults); err != nil {
		return config.Config{}, fmt.Errorf("gitleaks config: %w", err)
	}
	for id, r := range cfg.Rules {
		if r.Allowlists, err = withoutPaths(r.Allowlists, defaults); err != nil {
			return config.Config{}, fmt.Errorf("gitleaks config: rule %s: %w", id, err)
		}
		cfg.Rules[id] = r
	}
	return cfg, nil
}

func withoutPaths(as []*config.Allowlist, drop map[string]bool) ([]*config.Allowlist, error) {
	var out []*config.Allowlist
	for _, a := range as {
		if a.MatchCondition == config.AllowlistMatchAnd || !slices.ContainsFunc(a.Paths, func(p *regexp.Regexp) bool { return drop[p.String()] }) {
			out = append(out, a)
			continue
		}
		// An Allowlist compiles its conditions once (Validate); a copy with
		// fewer paths is a new one, validated afresh.
		b := &config.Allowlist{
			Description:    a.Description,
			MatchCondition: a.MatchCondition,
			Commits:        slices.Clone(a.Commits),
			RegexTarget:    a.RegexTarget,
			Regexes:        slices.Clone(a.Regexes),
			StopWords:      slices.Clone(a.StopWords),
		}
		for _, p := range a.Paths {
			if !drop[p.String()] {
				b.Paths = append(b.Paths, p)
			}
		}
		if len(b.Commits) == 0 && len(b.Paths) == 0 && len(b.Regexes) == 0 && len(b.StopWords) == 0 {
			continue
		}
		if err := b.Validate(); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}
