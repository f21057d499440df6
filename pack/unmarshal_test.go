package pack

import (
	"encoding/json"
	"reflect"
	"testing"
	"unsafe"

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
	// Arrays unmarshalSplit decodes apart, and what could mislead its look.
	`{"contents":[{"path":"a\"],\\","content":"x\\\"y"} , {"path":"b","redactions":[{"rule_id":"r"}],"relationship":["calls"]}],"file_index":[{"path":"c"}]}`,
	`{ "contents" : [ {"path":"a"} ,{"path":"b"} ] , "type" : "full" }`,
	`{"contents":[{"path":"a"}],"contents":[{"path":"b"}]}`, // twice
	`{"contents":[{"path":"a"},]}`,                              // a comma before the bracket
	`{"contents":[{"path":"a"} {"path":"b"}]}`,                  // no comma
	`{"contents":[{"path":"a"}],"type":"full"`,                  // unclosed
	`{"contents":[{"path":"a"}]}]`,                              // trailing data
	`{"cont\u0065nts":[{"path":"a"}],"changes":[{"path":"b"}]}`, // an escaped name
	`{"contents":[{"path":"a","zz_unknown":1}]}`,                // an unknown member in an element
	`{"contents":[null,{"path":"a"}],"key_files":[{"Path":"k"}]}`,
	`{"contents":[{"content":"\ud800x"},{"content":"ok"}]}`,
	`{"metadata":{"contents":[{"path":"a"}]},"contents":[1]}`,
	`{"contents":"[{\"path\":\"a\"}]"}`,
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
	// The same with the arrays decoded apart, whatever the size.
	var split Pack
	splitErr := unmarshal(data, &split, 0)
	if (splitErr == nil) != (wantErr == nil) {
		t.Fatalf("%q: Unmarshal with the arrays apart says %v, encoding/json %v", data, splitErr, wantErr)
	}
	if splitErr == nil && !reflect.DeepEqual(split, want) {
		t.Fatalf("%q:\n with the arrays apart %#v\n encoding/json        %#v", data, split, want)
	}
}

// TestUnmarshalSplit: a canonical pack's arrays are decoded apart (not
// left to the decoding of the whole), to the whole's value.
func TestUnmarshalSplit(t *testing.T) {
	split := 0
	for name, p := range goldenPacks(t) {
		data, err := Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var whole, apart Pack
		if err := jsonv2.Unmarshal(data, &whole, strict...); err != nil {
			t.Fatal(err)
		}
		arrays, ok := topArrays(data, splitFields())
		if !ok {
			t.Fatalf("%s: topArrays did not follow a canonical pack", name)
		}
		if len(arrays) == 0 {
			continue
		}
		if !unmarshalSplit(data, &apart) {
			t.Fatalf("%s: not decoded apart", name)
		}
		split++
		if !reflect.DeepEqual(apart, whole) {
			t.Fatalf("%s: decoded apart\n%#v\nwhole\n%#v", name, apart, whole)
		}
	}
	if split == 0 {
		t.Fatal("no golden pack has an array to decode apart")
	}
	for _, c := range []struct {
		data string
		ok   bool
	}{
		{`{"contents":[{"path":"a"}]}`, true},
		{`{"contents":[{"path":"a\\\\","content":"\\\"q\\\""},{"path":"b"}],"type":"x\\\\"}`, true}, // quotes after even and odd runs of backslashes
		{`{"contents":[{"path":"a"}],"contents":[{"path":"b"}]}`, false},
		{`{"contents":[{"path":"a"},]}`, false},
		{`{"contents":[{"path":"a"}]} x`, false},
		{`{"cont\u0065nts":[{"path":"a"}]}`, false}, // no array found: decoded whole
	} {
		var p Pack
		if got := unmarshalSplit([]byte(c.data), &p); got != c.ok {
			t.Errorf("unmarshalSplit(%s) = %v, want %v", c.data, got, c.ok)
		}
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

// TestUnmarshalSharesData: a string without an escape is the bytes of data
// between its quotes, not a copy; one with an escape is its own.
func TestUnmarshalSharesData(t *testing.T) {
	data := []byte(`{"pack_id":"pk_x","contents":[{"path":"src/a.go","content":"one line","sha256":""},{"path":"b","content":"x\ny"}]}`)
	var p Pack
	if err := Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	within := func(s string) bool {
		at := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		start := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
		return at >= start && at+uintptr(len(s)) <= start+uintptr(len(data))
	}
	for _, s := range []string{p.PackID, p.Contents[0].Path, p.Contents[0].Content} {
		if !within(s) {
			t.Errorf("%q is a copy, not the pack bytes' own", s)
		}
	}
	if got := p.Contents[1].Content; got != "x\ny" || within(got) {
		t.Errorf("an escaped string: %q (in data: %v), want its own \"x\\ny\"", got, within(got))
	}
}
