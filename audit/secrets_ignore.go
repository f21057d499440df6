package audit

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/ctxpack/ctxpack/internal/fsutil"
	"github.com/zricethezav/gitleaks/v8/config"
)

// ignoreSet is the set of .gitleaksignore fingerprints, parsed exactly as
// gitleaks' Detector.AddGitleaksIgnore does (v8.30.1): blank lines and lines
// starting with '#' are skipped, the path part of a 3-part (`file:rule:line`)
// or 4-part (`commit:file:rule:line`) entry has '\' replaced by '/', and any
// other line is kept verbatim (gitleaks warns and keeps it too).
type ignoreSet map[string]struct{}

func loadIgnoreFile(path string) (ignoreSet, error) {
	if path == "" {
		return ignoreSet{}, nil
	}
	data, err := fsutil.ReadFile(path, fsutil.MaxIgnoreBytes)
	if err != nil {
		return nil, fmt.Errorf("gitleaks ignore file %s: %w", path, err)
	}
	return parseIgnore(path, data)
}

// parseIgnore reads .gitleaksignore content; name names it in messages.
func parseIgnore(name string, data []byte) (ignoreSet, error) {
	set := ignoreSet{}
	if err := set.read(bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("gitleaks ignore file %s: %w", name, err)
	}
	return set, nil
}

func (set ignoreSet) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	replacer := strings.NewReplacer("\\", "/")
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s := strings.Split(line, ":")
		switch len(s) {
		case 3:
			s[0] = replacer.Replace(s[0])
		case 4:
			s[1] = replacer.Replace(s[1])
		}
		set[strings.Join(s, ":")] = struct{}{}
	}
	return sc.Err()
}

// fingerprint returns the fingerprint gitleaks gives a finding
// (Detector.AddFinding): `commit:file:rule:line` when the finding comes from a
// commit, `file:rule:line` otherwise.
func fingerprint(commit, path, rule string, line int) string {
	if commit != "" {
		return fmt.Sprintf("%s:%s:%s:%d", commit, path, rule, line)
	}
	return fmt.Sprintf("%s:%s:%d", path, rule, line)
}

// ignored mirrors Detector.AddFinding: a finding is dropped when its global
// fingerprint `file:rule:line` is listed, or, for a commit finding, when its
// commit fingerprint is listed.
func (set ignoreSet) ignored(commit, path, rule string, line int) bool {
	if len(set) == 0 {
		return false
	}
	if _, ok := set[fingerprint("", path, rule, line)]; ok {
		return true
	}
	if commit != "" {
		if _, ok := set[fingerprint(commit, path, rule, line)]; ok {
			return true
		}
	}
	return false
}

// globallyAllowedPath reports whether a global allowlist skips the whole
// fragment, as gitleaks' checkCommitOrPathAllowed does for cfg.Allowlists.
// It is applied to ctxpack's own assignment findings so that a path the
// repository's gitleaks config allowlists is allowlisted for every rule.
func globallyAllowedPath(allowlists []*config.Allowlist, path, commit string) bool {
	if path == "" && commit == "" {
		return false
	}
	for _, a := range allowlists {
		commitAllowed, _ := a.CommitAllowed(commit)
		pathAllowed := a.PathAllowed(path)
		if a.MatchCondition == config.AllowlistMatchAnd {
			if len(a.Regexes) > 0 || len(a.StopWords) > 0 {
				continue // decided per finding
			}
			var checks []bool
			if len(a.Commits) > 0 {
				checks = append(checks, commitAllowed)
			}
			if len(a.Paths) > 0 {
				checks = append(checks, pathAllowed)
			}
			if allTrue(checks) {
				return true
			}
		} else if commitAllowed || pathAllowed {
			return true
		}
	}
	return false
}

// globallyAllowedFinding mirrors gitleaks' checkFindingAllowed for the global
// allowlists: the secret, match or line (per RegexTarget) against regexes,
// stop words against the secret, and for AND conditions commits and paths.
func globallyAllowedFinding(allowlists []*config.Allowlist, path, commit, secret, match, line string) bool {
	for _, a := range allowlists {
		target := secret
		switch a.RegexTarget {
		case "match":
			target = match
		case "line":
			target = line
		}
		regexAllowed := a.RegexAllowed(target)
		stop, _ := a.ContainsStopWord(secret)
		if a.MatchCondition == config.AllowlistMatchAnd {
			var checks []bool
			if len(a.Commits) > 0 {
				ok, _ := a.CommitAllowed(commit)
				checks = append(checks, ok)
			}
			if len(a.Paths) > 0 {
				checks = append(checks, a.PathAllowed(path))
			}
			if len(a.Regexes) > 0 {
				checks = append(checks, regexAllowed)
			}
			if len(a.StopWords) > 0 {
				checks = append(checks, stop)
			}
			if allTrue(checks) {
				return true
			}
		} else if regexAllowed || stop {
			return true
		}
	}
	return false
}

// allTrue is gitleaks' allTrue: true for an empty list.
func allTrue(bs []bool) bool {
	for _, b := range bs {
		if !b {
			return false
		}
	}
	return true
}

// IgnoresFingerprint reports whether .gitleaksignore lists fp; for findings
// the caller fingerprints itself (a secret in a file name).
func (s *Scanner) IgnoresFingerprint(fp string) bool {
	_, ok := s.ignore[fp]
	return ok
}
