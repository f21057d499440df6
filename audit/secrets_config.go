package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	_ "unsafe" // for go:linkname to gitleaks' config.extendDepth

	"github.com/ctxpack/ctxpack/internal/fsutil"
	"github.com/ctxpack/ctxpack/internal/safetext"
	toml "github.com/pelletier/go-toml/v2"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
)

// gitleaksModule is the module path whose version Version reports.
const gitleaksModule = "github.com/zricethezav/gitleaks/v8"

// gitleaksFallbackVersion is reported when the build carries no module
// information (e.g. a binary built with -trimpath and no module data).
const gitleaksFallbackVersion = "v8.30.1"

// gitleaksConfigMu serializes every use of gitleaks' config code. Translate
// and the [extend] code paths use the global viper instance and the global
// extendDepth counter below, so two configs must never be built at once.
var gitleaksConfigMu sync.Mutex

// gitleaksExtendDepth is gitleaks' package-level counter of how deep the
// [extend] chain currently is. gitleaks increments it on every extension and
// never resets it (the CLI loads one config per process), so in a long-lived
// process the second config with `[extend] useDefault = true` loses its
// targeted allowlists and rule validation, and the third one silently loses
// all default rules (measured with v8.30.1). We reset it to 0 before each
// Translate, under gitleaksConfigMu, which gives exactly the behaviour of a
// fresh gitleaks process. If gitleaks renames the variable, the build fails at
// link time rather than silently misbehaving.
//
//go:linkname gitleaksExtendDepth github.com/zricethezav/gitleaks/v8/config.extendDepth
var gitleaksExtendDepth int

// loadGitleaksConfig builds a gitleaks config from the toml file at path
// ("" for the default rules); a relative [extend] path is read under baseDir
// (see loadGitleaksData).
func loadGitleaksConfig(path, baseDir string) (config.Config, error) {
	if path == "" {
		return loadGitleaksData("", nil, nil)
	}
	data, err := fsutil.ReadFile(path, fsutil.MaxConfigBytes)
	if err != nil {
		return config.Config{}, fmt.Errorf("gitleaks config %s: %w", path, err)
	}
	return loadGitleaksData(path, data, func(rel string) ([]byte, error) {
		return fsutil.ReadInRoot(baseDir, rel, fsutil.MaxConfigBytes)
	})
}

// loadGitleaksData is translateGitleaksData, then every path condition that
// comes from gitleaks' default config is taken out of the allowlists
// (dropDefaultPaths): ctxpack scans what leaves, and a lockfile, go.mod or
// a vendored jquery.js leaves like any file.
func loadGitleaksData(name string, data []byte, readRelative func(string) ([]byte, error)) (config.Config, error) {
	if data == nil {
		cfg, err := gitleaksDefaults()
		if err != nil {
			return config.Config{}, err
		}
		return cloneConfig(cfg), nil
	}
	paths, err := defaultAllowPaths()
	if err != nil {
		return config.Config{}, err
	}
	cfg, err := translateGitleaksData(name, data, readRelative)
	if err != nil {
		return config.Config{}, err
	}
	return dropDefaultPaths(cfg, paths)
}

// defaultAllowPaths is the set of path regexes of the allowlists of
// gitleaks' default config, global and per rule, as written in it: a
// compiled regexp's String is its source, so the set is read from the
// decoded toml, and a repository's own config needs no translation of the
// default rules for it (TestDefaultAllowPathsFromToml).
var defaultAllowPaths = sync.OnceValues(func() (map[string]bool, error) {
	vc, err := defaultViper()
	if err != nil {
		return nil, err
	}
	paths := map[string]bool{}
	add := func(ps []string) {
		for _, p := range ps {
			paths[p] = true
		}
	}
	// The default config writes its global allowlist as [allowlist], the
	// form gitleaks keeps for compatibility (Translate reads both).
	//lint:ignore SA1019 the default config uses the deprecated [allowlist] form
	if a := vc.AllowList; a != nil {
		add(a.Paths)
	}
	for _, a := range vc.Allowlists {
		add(a.Paths)
	}
	for _, r := range vc.Rules {
		if r.AllowList != nil {
			add(r.AllowList.Paths)
		}
		for _, a := range r.Allowlists {
			add(a.Paths)
		}
	}
	return paths, nil
})

// gitleaksDefaults translates gitleaks' default config once per process,
// its default path conditions dropped: it is a constant, and translating it
// (222 rules, the stop-word tries of their allowlists) is most of a small
// change's start-up. Callers get copies (cloneConfig).
var gitleaksDefaults = sync.OnceValues(func() (config.Config, error) {
	paths, err := defaultAllowPaths()
	if err != nil {
		return config.Config{}, err
	}
	cfg, err := translateGitleaksData("", nil, nil)
	if err != nil {
		return config.Config{}, err
	}
	return dropDefaultPaths(cfg, paths)
})

// cloneConfig copies what a Scanner's construction may write to (the rule
// map); everything else in a translated config is read-only once built
// (compiled regexps, validated allowlists, clipped tag slices).
func cloneConfig(c config.Config) config.Config {
	c.Rules = maps.Clone(c.Rules)
	return c
}

// translateGitleaksData builds a gitleaks config the way the gitleaks CLI does:
// the default rules when data is nil, else the toml read with a fresh
// viper, unmarshalled into config.ViperConfig and translated (which honours
// [extend] useDefault / path). name names the file in messages. An [extend]
// path must be relative to the repository; readRelative reads it from
// wherever the config itself was read (the work tree, or the base commit),
// and gitleaks reads that copy. Translate panics on a bad regex; the panic
// is returned as an error naming the file.
func translateGitleaksData(name string, data []byte, readRelative func(string) ([]byte, error)) (config.Config, error) {
	if data == nil {
		vc, err := defaultViper()
		if err != nil {
			return config.Config{}, err
		}
		return translateViper("gitleaks default config", vc)
	}
	v := viper.New() // a fresh viper, not gitleaks' global one
	v.SetConfigType("toml")
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		return config.Config{}, fmt.Errorf("gitleaks config %s: %w", name, err)
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return config.Config{}, fmt.Errorf("gitleaks config %s: %w", name, err)
	}
	if vc.Extend.Path != "" {
		tmp, err := materializeExtend(name, vc.Extend.Path, readRelative)
		if err != nil {
			return config.Config{}, err
		}
		defer os.RemoveAll(filepath.Dir(tmp))
		vc.Extend.Path = tmp
	}
	return translateViper(name, vc)
}

// defaultViper is gitleaks' default config decoded, once per process
// (~0.5 ms): its path conditions, its rules translated one by one and the
// whole translation all start from it, and translateViper copies what
// translating writes to. It decodes the same straight from its toml as
// through viper (TestDefaultConfigDecodesAsViper), at a tenth of the cost.
var defaultViper = sync.OnceValues(func() (config.ViperConfig, error) {
	var vc config.ViperConfig
	if err := toml.Unmarshal([]byte(config.DefaultConfig), &vc); err != nil {
		return config.ViperConfig{}, fmt.Errorf("gitleaks default config: %w", err)
	}
	return vc, nil
})

// translateViper translates vc with gitleaks' Translate, under
// gitleaksConfigMu, its stop words kept out of tries (takeStopWords), its
// Path cleared and its rules' tags clipped. vc is not changed. Translate
// panics on a bad regex; the panic is returned as an error naming name.
func translateViper(name string, vc config.ViperConfig) (cfg config.Config, err error) {
	gitleaksConfigMu.Lock()
	defer gitleaksConfigMu.Unlock()
	gitleaksExtendDepth = 0
	defer func() {
		gitleaksExtendDepth = 0
		if r := recover(); r != nil {
			cfg = config.Config{}
			err = fmt.Errorf("gitleaks config %s: invalid: %v", name, r)
		}
	}()
	vc = ownRules(vc)
	stops := takeStopWords(&vc)
	cfg, err = vc.Translate()
	if err != nil {
		return config.Config{}, fmt.Errorf("gitleaks config %s: %w", name, err)
	}
	for id, words := range stops {
		for i, w := range words {
			if w != nil {
				cfg.Rules[id].Allowlists[i].StopWords = w
			}
		}
	}
	// Translate records viper's global ConfigFileUsed, which is not ours. An
	// empty Path means no file is skipped for being "the config file": the
	// pack is what leaves, so the config file is scanned like any other.
	cfg.Path = ""
	// Detect appends decode tags to rule.Tags; clip every Tags slice so that
	// append always copies and concurrent Detect calls never share a backing
	// array.
	for id, r := range cfg.Rules {
		r.Tags = slices.Clip(r.Tags)
		cfg.Rules[id] = r
	}
	return cfg, nil
}

// ownRules copies what translating vc writes to: its rules, their
// keywords (Translate lowercases them in place) and allowlists
// (takeStopWords empties their stop words), so that the caller's vc is
// never changed.
func ownRules(vc config.ViperConfig) config.ViperConfig {
	vc.Rules = slices.Clone(vc.Rules)
	for i := range vc.Rules {
		r := &vc.Rules[i]
		r.Keywords = slices.Clone(r.Keywords)
		r.Allowlists = slices.Clone(r.Allowlists)
		for j, a := range r.Allowlists {
			if a != nil {
				c := *a
				r.Allowlists[j] = &c
			}
		}
	}
	return vc
}

// takeStopWords takes the stop words out of the rule allowlists of vc that
// have another condition (an allowlist of stop words alone would not
// translate without them), for the caller to put back into the translated
// allowlists: rule id → the allowlists' stop words by index, lowercased,
// without repeats and sorted, as Validate leaves them (in its map order).
//
// Translate's Validate builds each allowlist's stop words into an
// Aho-Corasick trie: for generic-api-key's 1,446 that is 8.6 MB of heap and
// ~4 ms in every process, most of the rules' memory. An allowlist holding
// stop words and no trie checks them one by one (ContainsStopWord's other
// branch, strings.Contains on the lowercased secret): the same answer, and
// it is asked only of a finding that passed its rule's entropy check.
func takeStopWords(vc *config.ViperConfig) map[string][][]string {
	stops := map[string][][]string{}
	if vc.Extend.UseDefault || vc.Extend.Path != "" || vc.Extend.URL != "" {
		return stops
	}
	seen := map[string]int{}
	for _, r := range vc.Rules {
		seen[r.ID]++
	}
	for _, r := range vc.Rules {
		if seen[r.ID] > 1 {
			continue
		}
		for i, a := range r.Allowlists {
			if len(a.StopWords) == 0 || len(a.Commits)+len(a.Paths)+len(a.Regexes) == 0 {
				continue
			}
			words := make([]string, 0, len(a.StopWords))
			for _, w := range a.StopWords {
				words = append(words, strings.ToLower(w))
			}
			slices.Sort(words)
			if stops[r.ID] == nil {
				stops[r.ID] = make([][]string, len(r.Allowlists))
			}
			stops[r.ID][i] = slices.Compact(words)
			a.StopWords = nil
		}
	}
	return stops
}

// gitleaksVersion reads the gitleaks module version from the build info.
func gitleaksVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return gitleaksFallbackVersion
	}
	for _, m := range bi.Deps {
		if m.Path != gitleaksModule {
			continue
		}
		if m.Replace != nil && m.Replace.Version != "" {
			return m.Replace.Version
		}
		if m.Version != "" && m.Version != "(devel)" {
			return m.Version
		}
	}
	return gitleaksFallbackVersion
}

// rulesDigest is a stable sha256 over everything in cfg that decides what is
// a finding: every rule (id, regex, path, secret group, entropy, keywords,
// required rules, skip-report flag, allowlists), the global allowlists, the
// decode depth and the version of ctxpack's own assignment rules.
func rulesDigest(cfg config.Config, decodeDepth int) string {
	var b strings.Builder
	line := func(parts ...string) {
		for i, p := range parts {
			if i > 0 {
				b.WriteByte(0x1f)
			}
			b.WriteString(strconv.Quote(p))
		}
		b.WriteByte('\n')
	}
	line("ctxpack-rules-digest", "v1")
	line("assignment-rules", assignRulesVersion)
	line("decode-depth", strconv.Itoa(decodeDepth))

	ids := make([]string, 0, len(cfg.Rules))
	for id := range cfg.Rules {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		r := cfg.Rules[id]
		regex, path := "", ""
		if r.Regex != nil {
			regex = r.Regex.String()
		}
		if r.Path != nil {
			path = r.Path.String()
		}
		line("rule", id, regex, path,
			strconv.Itoa(r.SecretGroup),
			strconv.FormatFloat(r.Entropy, 'g', -1, 64),
			strconv.FormatBool(r.SkipReport))
		kw := slices.Clone(r.Keywords)
		slices.Sort(kw)
		line(append([]string{"keywords"}, kw...)...)
		for _, req := range r.RequiredRules {
			wl, wc := "", ""
			if req.WithinLines != nil {
				wl = strconv.Itoa(*req.WithinLines)
			}
			if req.WithinColumns != nil {
				wc = strconv.Itoa(*req.WithinColumns)
			}
			line("required", req.RuleID, wl, wc)
		}
		for _, a := range r.Allowlists {
			allowlistDigestLines(line, "rule-allowlist", a)
		}
	}
	for _, a := range cfg.Allowlists {
		allowlistDigestLines(line, "global-allowlist", a)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

func allowlistDigestLines(line func(...string), kind string, a *config.Allowlist) {
	line(kind, a.MatchCondition.String(), a.RegexTarget)
	commits := slices.Clone(a.Commits) // Validate keeps them in map order
	slices.Sort(commits)
	for _, c := range commits {
		line("commit", c)
	}
	for _, p := range a.Paths {
		line("path", p.String())
	}
	for _, r := range a.Regexes {
		line("regex", r.String())
	}
	sw := slices.Clone(a.StopWords)
	slices.Sort(sw)
	line(append([]string{"stopwords"}, sw...)...)
}

// materializeExtend reads the file a config's [extend] path names (relative
// to the repository, from where the config was read) into a temporary file
// for gitleaks, which reads extended configs from disk itself. A nested
// [extend] path in that file is refused: gitleaks would read it from its
// working directory, not from where the configuration comes from.
func materializeExtend(name, rel string, readRelative func(string) ([]byte, error)) (string, error) {
	clean := filepath.ToSlash(filepath.Clean(filepath.FromSlash(rel)))
	if filepath.IsAbs(rel) || clean == ".." || strings.HasPrefix(clean, "../") || readRelative == nil {
		return "", fmt.Errorf("gitleaks config %s: [extend] path %s must be a path inside the repository, relative to its root", name, safetext.Quote(rel))
	}
	data, err := readRelative(clean)
	if err != nil {
		return "", fmt.Errorf("gitleaks config %s: [extend] path %s: %w", name, safetext.Quote(rel), err)
	}
	inner := viper.New()
	inner.SetConfigType("toml")
	if err := inner.ReadConfig(strings.NewReader(string(data))); err == nil && inner.GetString("extend.path") != "" {
		return "", fmt.Errorf("gitleaks config %s: [extend] path %s itself extends %s: one level of [extend] path is supported", name, safetext.Quote(rel), safetext.Quote(inner.GetString("extend.path")))
	}
	dir, err := os.MkdirTemp("", "ctxpack-gitleaks-")
	if err != nil {
		return "", err
	}
	tmp := filepath.Join(dir, "extend.toml")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return tmp, nil
}

// ExtendPath is the file a gitleaks config's [extend] path names, "" when
// it names none or data is not a config (loading it reports that).
func ExtendPath(data []byte) string {
	var c struct {
		Extend struct {
			Path string `toml:"path"`
		} `toml:"extend"`
	}
	if toml.Unmarshal(data, &c) != nil {
		return ""
	}
	return c.Extend.Path
}
