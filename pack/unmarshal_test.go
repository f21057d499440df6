package pack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
)

// unmarshalCases are bytes where the strict decoder and encoding/json could
// part: what each case holds, encoding/json's value must come out.
var unmarshalCases = []string{
	`{"pack_id":"pk_x","contents":[{"path":"a","content":"x\n\u00e9\ud83d\ude00"}]}`,
	`{"Pack_ID":"pk_x"}`,                            // another case: encoding/json matches it
	`{"pack_id":"a","pack_id":"b"}`,                 // twice: encoding/json keeps the last
	`{"contents":[{"content":"\ud800x"}]}`,          // a lone surrogate: U+FFFD
	"{\"contents\":[{\"content\":\"\xff\"}]}",       // invalid UTF-8: U+FFFD
	`{"zz_unknown":1,"type":"full"}`,                // an unknown member: ignored
	`{"budget":{"used_chars":1.5}}`,                 // not an integer: an error
	`{"budget":null,"file_index":null,"type":null}`, // nulls
	`{"metadata":{"exclusions_by_reason":{"binary":2}}}`,
	`{"contents":[{"distance":3,"original_size_bytes":7,"score":0.30000000000000004}]} `,
	`{"type":"full"} x`, // trailing data: an error
	`[]`,
}

// checkUnmarshal fails when Unmarshal and encoding/json's Unmarshal disagree
// on data: the error, or the value.
func checkUnmarshal(t *testing.T, data []byte) {
	t.Helper()
	var got, want Pack
	gotErr, wantErr := Unmarshal(data, &got), json.Unmarshal(data, &want)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("%q: Unmarshal says %v, encoding/json %v", data, gotErr, wantErr)
	}
	if gotErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n Unmarshal     %#v\n encoding/json %#v", data, got, want)
	}
}

func TestUnmarshalIsEncodingJSON(t *testing.T) {
	for _, c := range unmarshalCases {
		checkUnmarshal(t, []byte(c))
	}
	for name, p := range goldenPacks(t) {
		data, err := Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		// The fast way, not the fallback, decodes what Marshal writes.
		var got Pack
		if err := jsonv2.Unmarshal(data, &got, jsonv2.RejectUnknownMembers(true)); err != nil {
			t.Fatalf("%s: the strict decoder refuses a canonical pack: %v", name, err)
		}
		checkUnmarshal(t, data)
	}
}

// FuzzUnmarshal: on any bytes, Unmarshal gives what encoding/json gives.
func FuzzUnmarshal(f *testing.F) {
	for _, c := range unmarshalCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkUnmarshal(t, data)
	})
}

// largePack is a golden pack grown past splitDecodeMin: its arrays'
// elements repeated under other paths and ids, with redactions (objects
// inside the elements) and contents holding what the arrays' separators
// look like.
func largePack(t testing.TB) *Pack {
	t.Helper()
	p := goldenPacks(t)[filepath.Join("testdata", "full_commit.golden.json")]
	if p == nil || len(p.FileIndex) == 0 || len(p.Changes) == 0 || len(p.KeyFiles) == 0 || len(p.Contents) == 0 {
		t.Fatal("the full_commit golden pack lacks an array unmarshalSplit splits")
	}
	big := *p
	big.FileIndex, big.Changes, big.KeyFiles, big.Contents = nil, nil, nil, nil
	tricky := "x},{\"path\":\"y\"},{\"id\":\"z\"}],\"contents\":[\n"
	for i := 0; len(big.Contents) < 3000; i++ {
		for _, e := range p.FileIndex {
			e.Path = fmt.Sprintf("d%d/%s", i, e.Path)
			big.FileIndex = append(big.FileIndex, e)
		}
		for _, c := range p.Changes {
			c.Path = fmt.Sprintf("d%d/%s", i, c.Path)
			c.Redactions = []Redaction{{Line: i, RuleID: "r"}, {Line: i + 1, RuleID: "s"}}
			big.Changes = append(big.Changes, c)
		}
		for _, it := range p.KeyFiles {
			it.ID, it.Path = fmt.Sprintf("d%d/%s", i, it.ID), fmt.Sprintf("d%d/%s", i, it.Path)
			big.KeyFiles = append(big.KeyFiles, it)
		}
		for _, it := range p.Contents {
			it.ID, it.Path = fmt.Sprintf("d%d/%s", i, it.ID), fmt.Sprintf("d%d/%s", i, it.Path)
			it.Content = strings.Repeat(tricky, i%7) + it.Content
			it.Redactions = []Redaction{{Line: 1, RuleID: "r"}}
			big.Contents = append(big.Contents, it)
		}
	}
	return &big
}

// TestUnmarshalSplit: a pack as Marshal writes it is decoded in parts,
// whatever their size, to what decoding it whole gives.
func TestUnmarshalSplit(t *testing.T) {
	packs := goldenPacks(t)
	packs["large"] = largePack(t)
	for name, p := range packs {
		data, err := Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var want Pack
		if err := jsonv2.Unmarshal(data, &want, strict); err != nil {
			t.Fatal(err)
		}
		for _, chunk := range []int{1, 300, 4096, splitChunk} {
			var got Pack
			if !unmarshalSplit(data, &got, chunk) {
				t.Fatalf("%s, parts of %d bytes: not decoded in parts", name, chunk)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s, parts of %d bytes: decoded in parts, the pack differs from the whole decode", name, chunk)
			}
		}
	}
	data, err := Marshal(packs["large"])
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < splitDecodeMin {
		t.Fatalf("the large pack is %d bytes, under splitDecodeMin", len(data))
	}
	checkUnmarshal(t, data)
}

// splitCases are bytes where guessing the arrays' places from the bytes
// goes wrong: decoded in parts, they must give what the whole decode
// gives, or not be decoded in parts.
var splitCases = []string{
	`{"type":"x\"contents\":[","contents":[{"id":"a"},{"id":"b"}]}`,
	`{"manifest":{"contents":[{"id":"a"},{"id":"b"}]},"contents":[]}`,
	`{"contents":[{"id":"a"},{"id":"b"}],"contents":[{"id":"c"}]}`,
	`{"contents":[{"id":"a"},{"id":"b"}], "file_index":[{"path":"p"},{"path":"q"}]}`,
	`{"contents":[{"id":"a"},{"id":"b"}]`,
	`{"contents":[{"id":"a"}],[{"id":"b"}]}`,
	`{"contents":[{"id":"a","redactions":[{"id":"b"},{"id":"c"}]},{"id":"d"}]}`,
	`{"contents":[{"id":"a"},{"id":"b"}],"file_index":[{"path":"p"},{"path":"q"}]}x`,
	`{"file_index":[{"path":"p"},{"path":"q"}],"changes":[{"path":"p"},{"path":"q"}],"key_files":[],"contents":[{"id":"a"},{"id":"b"}]}`,
	`{"contents" :[{"id":"a"},{"id":"b"}]}`,
	`{"contents":[{"id":"a"},{"id":"b"},]}`,
	`{"contents":[{"id":"a"},{"id":"\u0062"}],"budget":{"used_chars":1}}`,
	"{\"contents\":[{\"id\":\"a\"},{\"id\":\"\xff\"}]}",
	`[{"contents":[{"id":"a"},{"id":"b"}]}]`,
}

// checkPartsDecode fails when unmarshalSplit, with parts of chunk bytes, decodes
// data to anything but what jsonv2.Unmarshal gives (or decodes what it
// refuses).
func checkPartsDecode(t *testing.T, data []byte, chunk int) {
	t.Helper()
	var got, want Pack
	if !unmarshalSplit(data, &got, chunk) {
		return
	}
	if err := jsonv2.Unmarshal(data, &want, strict); err != nil {
		t.Fatalf("%q: decoded in parts, but the whole decode refuses it: %v", data, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: decoded in parts:\n %#v\nwhole:\n %#v", data, got, want)
	}
}

func TestUnmarshalSplitGuesses(t *testing.T) {
	for _, c := range splitCases {
		for _, chunk := range []int{1, 8, 1 << 20} {
			checkPartsDecode(t, []byte(c), chunk)
		}
	}
	// The well-formed ones are decoded in parts.
	var p Pack
	if !unmarshalSplit([]byte(splitCases[8]), &p, 1) || len(p.Contents) != 2 || len(p.FileIndex) != 2 || len(p.Changes) != 2 || p.KeyFiles == nil {
		t.Fatalf("a document of the four arrays was not decoded in parts: %+v", p)
	}
}

// FuzzUnmarshalSplit: on any bytes, decoding in parts gives what the
// whole decode gives, or does not decode.
func FuzzUnmarshalSplit(f *testing.F) {
	for _, c := range splitCases {
		f.Add([]byte(c), uint16(1))
	}
	for _, c := range unmarshalCases {
		f.Add([]byte(c), uint16(8))
	}
	f.Fuzz(func(t *testing.T, data []byte, chunk uint16) {
		checkPartsDecode(t, data, int(chunk))
	})
}

// TestInteriorsAreMembers: the place of an interior taken out must be the
// value of the top-level member of its array's name, not a nested one of
// that name (a field a type may gain), nor another member's.
func TestInteriorsAreMembers(t *testing.T) {
	contents := &foundArray{a: splitArrays[3]}
	rest := []byte(`{"intent":{"contents":[]},"type":"x","contents":[],"key_files":[1]}`)
	nested := bytes.Index(rest, []byte(`[]`)) + 1
	top := bytes.LastIndex(rest, []byte(`[]`)) + 1
	for _, c := range []struct {
		at   int
		want bool
	}{{top, true}, {nested, false}, {top - 1, false}, {len(rest) - 3, false}} {
		if got := interiorsAreMembers(rest, []*foundArray{contents}, []int{c.at}); got != c.want {
			t.Errorf("the interior at %d of %s: %v, want %v", c.at, rest, got, c.want)
		}
	}
	if interiorsAreMembers([]byte(`{"contents":[0]}`), []*foundArray{contents}, []int{13}) {
		t.Error("a member whose value is not [] took an interior")
	}
}

// BenchmarkUnmarshalLarge decodes a pack of a few MB whole and in parts.
func BenchmarkUnmarshalLarge(b *testing.B) {
	data, err := Marshal(largePack(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("whole", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			var p Pack
			if err := jsonv2.Unmarshal(data, &p, strict); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parts", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			var p Pack
			if !unmarshalSplit(data, &p, splitChunk) {
				b.Fatal("not decoded in parts")
			}
		}
	})
}
