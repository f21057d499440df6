package audit

import (
	"reflect"
	"strings"
	"testing"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
)

// viperDecode decodes a gitleaks config the way the gitleaks CLI does.
func viperDecode(t testing.TB, text string) config.ViperConfig {
	t.Helper()
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(text)); err != nil {
		t.Fatal(err)
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		t.Fatal(err)
	}
	return vc
}

// TestDefaultConfigDecodesAsViper keeps the viper-free decoding of the
// default config honest across gitleaks upgrades: a field viper fills and
// the toml decoder does not (a tag, a squashed struct) fails here.
func TestDefaultConfigDecodesAsViper(t *testing.T) {
	want := viperDecode(t, config.DefaultConfig)
	var got config.ViperConfig
	if err := toml.Unmarshal([]byte(config.DefaultConfig), &got); err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1019 the default config uses the deprecated [allowlist] form
	if len(want.Rules) < 200 || want.AllowList == nil {
		t.Fatalf("viper decoded %d rules and no global allowlist: not gitleaks' default config", len(want.Rules))
	}
	if !reflect.DeepEqual(want, got) {
		for i := range min(len(want.Rules), len(got.Rules)) {
			if !reflect.DeepEqual(want.Rules[i], got.Rules[i]) {
				t.Errorf("rule %d (%s): viper %+v, toml %+v", i, want.Rules[i].ID, want.Rules[i], got.Rules[i])
				break
			}
		}
		t.Fatalf("the toml decoding of gitleaks' default config differs from viper's (%d/%d rules, %d/%d allowlists)",
			len(want.Rules), len(got.Rules), len(want.Allowlists), len(got.Allowlists))
	}
}

// TestDefaultConfigLoadedOnce: the default config, translated once per
// process, is the config the viper path translates, and every caller gets
// its own rule map.
func TestDefaultConfigLoadedOnce(t *testing.T) {
	vc := viperDecode(t, config.DefaultConfig)
	gitleaksConfigMu.Lock()
	gitleaksExtendDepth = 0
	raw, err := vc.Translate()
	gitleaksConfigMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	paths, err := defaultAllowPaths()
	if err != nil {
		t.Fatal(err)
	}
	ref, err := dropDefaultPaths(raw, paths)
	if err != nil {
		t.Fatal(err)
	}
	want := rulesDigest(ref, DecodeDepth)

	a, err := loadGitleaksData("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := rulesDigest(a, DecodeDepth); got != want {
		t.Fatalf("rules digest of the cached default config %s, of viper's %s", got, want)
	}
	for id := range a.Rules {
		delete(a.Rules, id)
	}
	b, err := loadGitleaksData("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Rules) != len(ref.Rules) || rulesDigest(b, DecodeDepth) != want {
		t.Fatalf("a caller's change to its rules reached the next caller: %d rules, want %d", len(b.Rules), len(ref.Rules))
	}
}

// TestDefaultAllowPathsFromToml: the path conditions read from the default
// config's toml are those of its translation, global and per rule.
func TestDefaultAllowPathsFromToml(t *testing.T) {
	raw, err := translateGitleaksData("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	add := func(as []*config.Allowlist) {
		for _, a := range as {
			for _, p := range a.Paths {
				want[p.String()] = true
			}
		}
	}
	add(raw.Allowlists)
	for _, r := range raw.Rules {
		add(r.Allowlists)
	}
	got, err := defaultAllowPaths()
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < 10 {
		t.Fatalf("the default config's translation has %d path conditions: not gitleaks' default config", len(want))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("path conditions from the toml %v, from the translation %v", got, want)
	}
}

// BenchmarkTranslateDefaultConfig is what one process pays, once, for
// gitleaks' default rules (decoding and translating them, then dropping the
// default path conditions).
func BenchmarkTranslateDefaultConfig(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		raw, err := translateGitleaksData("", nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		paths, err := defaultAllowPaths()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := dropDefaultPaths(raw, paths); err != nil {
			b.Fatal(err)
		}
	}
}
