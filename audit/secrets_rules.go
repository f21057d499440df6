package audit

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/zricethezav/gitleaks/v8/config"
)

// ruleSource is the gitleaks config a Scanner runs, as its parts are
// needed: what every rule is (meta, from the config's text), the config
// without its rules (base: the global allowlists and the rest), each rule
// translated (rule), and the whole config translated (full).
//
// Translating gitleaks' 222 default rules compiles every rule's regex,
// ~9 ms of CPU in every process, though a small change meets a handful of
// them. For the default config each rule is translated on first use, by
// gitleaks' own Translate on a config of that rule alone (TestRulesLazily
// keeps every such rule equal to its translation with the others); a
// repository's config is translated whole, as before.
type ruleSource struct {
	base config.Config // Rules is nil
	meta map[string]ruleMeta
	// ids are meta's keys, sorted.
	ids  []string
	rule func(id string) config.Rule
	full func() config.Config
	// digest is rulesDigest of full, with DecodeDepth.
	digest string
	// windows are the rules on windows (newRuleWindows), built once: the
	// default source is one for the process, and its windows are built
	// beside the first reads of a run (Preload) instead of by its scanner.
	windowsOnce sync.Once
	windows     *ruleWindows
}

// ruleWindows is newRuleWindows(s), built once.
func (s *ruleSource) ruleWindows() *ruleWindows {
	s.windowsOnce.Do(func() { s.windows = newRuleWindows(s) })
	return s.windows
}

// ruleMeta is what the windows need of a rule before it is translated.
type ruleMeta struct {
	pattern, path string   // the sources of its regex and path ("": none)
	keywords      []string // lowercased, as gitleaks' prefilter compares them
	required      []string // the ids of its required rules
	requiredBy    bool     // another rule requires it
	skipReport    bool
}

// eagerRules is the source of a config translated whole.
func eagerRules(cfg config.Config) *ruleSource {
	src := &ruleSource{base: cfg, meta: map[string]ruleMeta{}, full: func() config.Config { return cfg }}
	src.base.Rules = nil
	for id, r := range cfg.Rules {
		m := ruleMeta{keywords: r.Keywords, skipReport: r.SkipReport}
		if r.Regex != nil {
			m.pattern = r.Regex.String()
		}
		if r.Path != nil {
			m.path = r.Path.String()
		}
		for _, req := range r.RequiredRules {
			m.required = append(m.required, req.RuleID)
		}
		src.meta[id] = m
	}
	src.finish()
	src.rule = func(id string) config.Rule { return cfg.Rules[id] }
	src.digest = rulesDigest(cfg, DecodeDepth)
	return src
}

// finish sets ids and requiredBy from meta.
func (src *ruleSource) finish() {
	for id, m := range src.meta {
		src.ids = append(src.ids, id)
		for _, req := range m.required {
			if r, ok := src.meta[req]; ok {
				r.requiredBy = true
				src.meta[req] = r
			}
		}
	}
	slices.Sort(src.ids)
}

// subset is base with the rules of ids, translated.
func (src *ruleSource) subset(ids []string) config.Config {
	c := src.base
	c.Rules = make(map[string]config.Rule, len(ids))
	for _, id := range ids {
		c.Rules[id] = src.rule(id)
	}
	return c
}

// loadRules is the source of the gitleaks config data (name names it in
// messages; nil data: the default config), see loadGitleaksData.
func loadRules(name string, data []byte, readRelative func(string) ([]byte, error)) (*ruleSource, error) {
	if data == nil {
		src, err := lazyDefaultRules()
		if err != nil || src != nil {
			return src, err
		}
	}
	cfg, err := loadGitleaksData(name, data, readRelative)
	if err != nil {
		return nil, err
	}
	return eagerRules(cfg), nil
}

// Preload does, once per process, what a scanner with gitleaks' default
// rules starts from (decoding the config, its path conditions, each rule's
// metadata, the rules' windows) and compiles the package's own patterns, so that a caller can
// have it done beside other work before it knows the configuration; the
// first scanner does what is not done.
func Preload() {
	if src, err := lazyDefaultRules(); err == nil && src != nil && gitleaksVersion() == fastGitleaksVersion {
		src.ruleWindows()
	}
	regexps.CompileAll()
}

// lazyDefaultRules is the source of gitleaks' default config, its rules
// translated one by one as they are needed; nil when the default config
// uses what a rule cannot be translated alone with (an [extend], a
// required rule, an allowlist that targets rules), which it does not in
// the gitleaks version built in (TestRulesLazily).
var lazyDefaultRules = sync.OnceValues(func() (*ruleSource, error) {
	vc, err := defaultViper()
	if err != nil {
		return nil, err
	}
	if vc.Extend.UseDefault || vc.Extend.Path != "" || vc.Extend.URL != "" {
		return nil, nil
	}
	for _, a := range vc.Allowlists {
		if len(a.TargetRules) > 0 {
			return nil, nil
		}
	}
	paths, err := defaultAllowPaths()
	if err != nil {
		return nil, err
	}
	src := &ruleSource{meta: map[string]ruleMeta{}, full: func() config.Config {
		cfg, err := gitleaksDefaults()
		if err != nil {
			panic(fmt.Sprintf("gitleaks default config: %v", err)) // translated once already (TestRulesLazily)
		}
		return cloneConfig(cfg)
	}}
	once := map[string]func() config.Rule{}
	for i, vr := range vc.Rules {
		if _, twice := src.meta[vr.ID]; twice || len(vr.Required) > 0 {
			return nil, nil
		}
		m := ruleMeta{pattern: vr.Regex, path: vr.Path, skipReport: vr.SkipReport, keywords: []string{}}
		for _, k := range vr.Keywords {
			m.keywords = append(m.keywords, strings.ToLower(k))
		}
		src.meta[vr.ID] = m
		once[vr.ID] = sync.OnceValue(func() config.Rule {
			r, err := translateRule(vc, i, paths)
			if err != nil {
				panic(fmt.Sprintf("gitleaks default rule %s: %v", vr.ID, err)) // every one translates (TestRulesLazily)
			}
			return r
		})
	}
	src.finish()
	src.rule = func(id string) config.Rule {
		if f, ok := once[id]; ok {
			return f()
		}
		return config.Rule{}
	}
	// The config without rules: the global allowlist and the rest.
	bare := vc
	bare.Rules = nil
	if src.base, err = translateViper("gitleaks default config", bare); err != nil {
		return nil, err
	}
	if src.base, err = dropDefaultPaths(src.base, paths); err != nil {
		return nil, err
	}
	src.base.Rules = nil
	src.base.Keywords = map[string]struct{}{}
	for _, m := range src.meta {
		for _, k := range m.keywords {
			src.base.Keywords[k] = struct{}{}
		}
	}
	src.digest = defaultRulesDigest
	return src, nil
})

// translateRule translates the i-th rule of vc alone, as Translate
// translates it among the others, its default path conditions dropped.
func translateRule(vc config.ViperConfig, i int, paths map[string]bool) (config.Rule, error) {
	one := vc
	one.Rules = vc.Rules[i : i+1]
	one.AllowList, one.Allowlists = nil, nil //lint:ignore SA1019 the default config's global allowlist is the base's
	cfg, err := translateViper("gitleaks default rule "+vc.Rules[i].ID, one)
	if err != nil {
		return config.Rule{}, err
	}
	if cfg, err = dropDefaultPaths(cfg, paths); err != nil {
		return config.Rule{}, err
	}
	return cfg.Rules[vc.Rules[i].ID], nil
}
