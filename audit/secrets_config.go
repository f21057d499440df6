package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	_ "unsafe" // for go:linkname to gitleaks' config.extendDepth

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

// loadGitleaksConfig builds a gitleaks config the way the gitleaks CLI does:
// the default rules when path is "", else the toml file at path read with a
// fresh viper, unmarshalled into config.ViperConfig and translated (which
// honours [extend] useDefault / path). A relative [extend] path is resolved
// against baseDir (gitleaks resolves it against its working directory, which
// is the repository root when it is run there). Translate panics on a bad
// regex; the panic is returned as an error naming the file.
//
// Then every path condition that comes from gitleaks' default config is
// taken out of the allowlists (dropDefaultPaths): ctxpack scans what leaves,
// and a lockfile, go.mod or a vendored jquery.js leaves like any file.
func loadGitleaksConfig(path, baseDir string) (config.Config, error) {
	defaults, err := defaultAllowPaths()
	if err != nil {
		return config.Config{}, err
	}
	cfg, err := translateGitleaksConfig(path, baseDir)
	if err != nil {
		return config.Config{}, err
	}
	return dropDefaultPaths(cfg, defaults)
}

// translateGitleaksConfig is loadGitleaksConfig without dropDefaultPaths.
func translateGitleaksConfig(path, baseDir string) (cfg config.Config, err error) {
	name := path
	data := config.DefaultConfig
	if path == "" {
		name = "gitleaks default config"
	} else {
		b, rerr := os.ReadFile(path)
		if rerr != nil {
			return config.Config{}, fmt.Errorf("gitleaks config %s: %w", path, rerr)
		}
		data = string(b)
	}

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

	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(data)); err != nil {
		return config.Config{}, fmt.Errorf("gitleaks config %s: %w", name, err)
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return config.Config{}, fmt.Errorf("gitleaks config %s: %w", name, err)
	}
	if vc.Extend.Path != "" && !filepath.IsAbs(vc.Extend.Path) && baseDir != "" {
		vc.Extend.Path = filepath.Join(baseDir, vc.Extend.Path)
	}
	cfg, err = vc.Translate()
	if err != nil {
		return config.Config{}, fmt.Errorf("gitleaks config %s: %w", name, err)
	}
	// Translate records viper's global ConfigFileUsed, which is not ours. An
	// empty Path means no file is skipped for being "the config file": the
	// pack is what leaves, so the config file is scanned like any other
	// (the default global allowlist still skips paths matching gitleaks\.toml).
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

// resolveOptional returns explicit when set, else def when that file exists,
// else "".
func resolveOptional(explicit, def string) (string, error) {
	if explicit != "" {
		if _, err := os.Stat(explicit); err != nil {
			return "", err
		}
		return explicit, nil
	}
	if def == "" {
		return "", nil
	}
	st, err := os.Stat(def)
	switch {
	case err == nil && st.Mode().IsRegular():
		return def, nil
	case err == nil, errors.Is(err, os.ErrNotExist):
		return "", nil
	default:
		return "", err
	}
}
