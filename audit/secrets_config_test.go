package audit

import (
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
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

// TestStopWordsWithoutTries: allowlists translated with their stop words
// taken out and put back (no trie) hold the same stop words as gitleaks'
// own translation and answer ContainsStopWord the same on secrets holding a
// stop word in any case, near misses and random strings; a config that
// extends another, a rule id that repeats and an allowlist of stop words
// alone are translated by gitleaks alone.
func TestStopWordsWithoutTries(t *testing.T) {
	const repoConfig = `
[[rules]]
id = "dup"
regex = '''dup-[a-z]{8}'''
[[rules.allowlists]]
regexes = ['''x''']
stopwords = ["Alpha"]
[[rules]]
id = "dup"
regex = '''dup-[a-z]{9}'''
[[rules.allowlists]]
regexes = ['''y''']
stopwords = ["Beta", "beta"]
[[rules]]
id = "only-stops"
regex = '''os-[a-z]{8}'''
[[rules.allowlists]]
stopwords = ["Gamma"]
[[rules]]
id = "mixed"
regex = '''mx-[a-z]{8}'''
[[rules.allowlists]]
condition = "AND"
paths = ['''\.txt$''']
stopwords = ["DELTA", "epsilon", "Delta"]
`
	cases := []struct {
		name string
		data []byte
		// stripped: rules whose allowlists lose their tries
		stripped []string
	}{
		{"default config", nil, []string{"generic-api-key"}},
		{"repository config", []byte(repoConfig), []string{"mixed"}},
		{"extending config", []byte("[extend]\nuseDefault = true\n" + repoConfig), nil},
	}
	r := rand.New(rand.NewPCG(11, 12))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text := config.DefaultConfig
			if tc.data != nil {
				text = string(tc.data)
			}
			vc := viperDecode(t, text)
			if got := slices.Sorted(maps.Keys(takeStopWords(&vc))); !slices.Equal(got, tc.stripped) {
				t.Fatalf("stop words taken from rules %v, want %v", got, tc.stripped)
			}
			vc = viperDecode(t, text)
			gitleaksConfigMu.Lock()
			gitleaksExtendDepth = 0
			ref, err := vc.Translate()
			gitleaksExtendDepth = 0
			gitleaksConfigMu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
			got, err := translateGitleaksData("test.toml", tc.data, nil)
			if err != nil {
				t.Fatal(err)
			}
			if rulesDigest(got, DecodeDepth) != rulesDigest(ref, DecodeDepth) {
				t.Fatal("rules digest differs from gitleaks' own translation")
			}
			checked := 0
			for id, rr := range ref.Rules {
				for i, ra := range rr.Allowlists {
					ga := got.Rules[id].Allowlists[i]
					if !slices.Equal(slices.Sorted(slices.Values(ga.StopWords)), slices.Sorted(slices.Values(ra.StopWords))) {
						t.Fatalf("%s allowlist %d: stop words %q, gitleaks %q", id, i, ga.StopWords, ra.StopWords)
					}
					probes := []string{"", "zz", randomSecret(r, 30)}
					for _, w := range ra.StopWords {
						probes = append(probes, randomSecret(r, 5)+strings.ToUpper(w)+randomSecret(r, 5),
							w, w[1:]+"Q", randomSecret(r, 3)+w[:len(w)-1])
					}
					for _, p := range probes {
						g, _ := ga.ContainsStopWord(p)
						w, _ := ra.ContainsStopWord(p)
						if g != w {
							t.Fatalf("%s allowlist %d: ContainsStopWord(%q) = %v, gitleaks %v", id, i, p, g, w)
						}
						checked++
					}
				}
			}
			if checked < 10 {
				t.Fatalf("only %d probes checked", checked)
			}
		})
	}
}

// randomSecret is n random characters of a secret's alphabet.
func randomSecret(r *rand.Rand, n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}
