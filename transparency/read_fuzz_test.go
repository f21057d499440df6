package transparency

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/pack"
)

// TestReadHugeLimit is the regression case of a limit (or a token's limit)
// near the largest int: start+limit overflowed and the page slice panicked.
func TestReadHugeLimit(t *testing.T) {
	p, rec := viewFixture()
	for _, limit := range []int{math.MaxInt, math.MaxInt - 1, math.MaxInt / 2} {
		if _, err := Read(p, rec, ReadOptions{Limit: limit, Offset: 1}); err != nil {
			t.Errorf("limit %d: %v", limit, err)
		}
		tok := (&rdToken{V: 1, PackID: p.PackID, Profile: ProfileOrchestrator, Limit: limit, Offset: 1, Total: 14}).encode()
		if _, err := Read(p, rec, ReadOptions{PageToken: tok}); err != nil {
			t.Errorf("token with limit %d: %v", limit, err)
		}
	}
}

// FuzzReadToken reads the fixture pack with a page token and options an
// agent controls: any input is a page or a ReadError, never a panic.
func FuzzReadToken(f *testing.F) {
	p, rec := viewFixture()
	good := (&rdToken{V: 1, PackID: p.PackID, Profile: ProfileExecutor, Limit: 2, Offset: 2, Total: 14}).encode()
	f.Add(good, "", 0, 0, "")
	f.Add("", "md", math.MaxInt, 1, "reviewer")
	f.Add(base64.RawURLEncoding.EncodeToString([]byte(`{"v":1,"limit":9223372036854775807}`)), "", 0, 0, "")
	f.Add("not a token!", "", -1, -1, "admin")
	f.Fuzz(func(t *testing.T, token, contains string, limit, offset int, profile string) {
		out, err := Read(p, rec, ReadOptions{PageToken: token, Contains: contains, Limit: limit, Offset: offset, Profile: profile})
		if err != nil {
			if _, ok := err.(*ReadError); !ok {
				t.Fatalf("error %T is not a ReadError: %v", err, err)
			}
			return
		}
		if !strings.Contains(out, "LEGEND") {
			t.Fatalf("page without a LEGEND")
		}
	})
}

// FuzzReadPack reads pack JSON a file (or a pull request's artifact)
// controls, in every profile.
func FuzzReadPack(f *testing.F) {
	p, _ := viewFixture()
	seed, err := json.Marshal(p)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"pack_id":"pk_aaaaaaaa","changes":[{"path":"a","diff":"@@ -1 +1 @@\n+x"}],"contents":[{"id":"a:1:1","text":"` + "```" + `"}]}`))
	f.Add([]byte(`{"key_files_summary":[{"path":"\u0000"}],"file_index":[{"path":"a/","files":-1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var p pack.Pack
		if json.Unmarshal(data, &p) != nil {
			return
		}
		for _, profile := range ReadProfiles {
			if _, err := Read(&p, nil, ReadOptions{Profile: profile, Limit: 3}); err != nil {
				if _, ok := err.(*ReadError); !ok {
					t.Fatalf("error %T is not a ReadError: %v", err, err)
				}
			}
		}
	})
}
