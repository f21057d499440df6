package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxpack/ctxpack/internal/secrettest"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/transparency"
)

func TestPutGetList(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	c := newClock()
	s := openStore(t, "", c, nil)
	v := put(t, s, f, "")
	var p pack.Pack
	if err := json.Unmarshal(f.pack, &p); err != nil {
		t.Fatal(err)
	}
	if v.ID != p.PackID || !ValidID(v.ID) || v.Revision != 1 || v.Status != StatusDraft || v.FreshnessState != Fresh {
		t.Fatalf("stored view: %+v", v)
	}
	if want := filepath.Base(f.repo.Dir) + "@" + f.head[:12]; v.Name != want {
		t.Fatalf("default name %q, want %q", v.Name, want)
	}
	if v.Pack.Head != f.head || v.Pack.Verdict != "pass" {
		t.Fatalf("pack info: %+v", v.Pack)
	}
	// Storing the same pack again changes nothing.
	c.Add(time.Minute)
	again, err := s.Put(ctx, PutInput{Pack: f.pack, Record: f.record, Name: "other"})
	if err != nil || again.Stored || again.View.Name != v.Name || again.View.UpdatedAt != v.UpdatedAt {
		t.Fatalf("second put: %+v %v", again, err)
	}
	got, err := s.Get(ctx, Target{Name: v.Name})
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != v.ID || got.Selection.SelectedBy != SelectedByOnly || got.Selection.SelectedRevision != 1 {
		t.Fatalf("get by name: %+v %+v", got, got.Selection)
	}
	if got, err := s.Get(ctx, Target{ID: v.ID}); err != nil || got.Selection.SelectedBy != SelectedByID {
		t.Fatalf("get by id: %+v %v", got, err)
	}
	list, err := s.List(ctx, "")
	if err != nil || len(list) != 1 || list[0].ID != v.ID {
		t.Fatalf("list: %+v %v", list, err)
	}
	// The stored bytes are the pack's bytes, exactly.
	data, _, err := s.PackBytes(ctx, Target{ID: v.ID})
	if err != nil || !bytes.Equal(data, f.pack) {
		t.Fatalf("pack bytes differ (%v)", err)
	}
	// No temporary or trash directory is left behind.
	des, _ := os.ReadDir(filepath.Join(s.Dir(), packsDir))
	if len(des) != 1 || des[0].Name() != v.ID {
		t.Fatalf("store directory holds %v", des)
	}
	for _, tc := range []struct {
		t    Target
		code string
	}{
		{Target{ID: "pk_bad"}, CodeInvalidData},
		{Target{ID: "../../etc"}, CodeInvalidData},
		{Target{ID: "pk_aaaaaaaa"}, CodeNotFound},
		{Target{Name: "nobody"}, CodeNotFound},
		{Target{}, CodeInvalidData},
		{Target{ID: v.ID, Name: "other"}, CodeInvalidData},
		{Target{ID: v.ID, Freshness: "stale"}, CodeInvalidData},
	} {
		_, err := s.Get(ctx, tc.t)
		storeErr(t, err, tc.code)
	}
	if _, err := s.Delete(ctx, Target{ID: v.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, Target{ID: v.ID}); err == nil {
		t.Fatal("deleted entry still there")
	}
}

func TestPutRefuses(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	s := openStore(t, "", newClock(), nil)
	var rec transparency.Record
	if err := json.Unmarshal(f.record, &rec); err != nil {
		t.Fatal(err)
	}
	failing := rec
	v := *rec.Verdict
	v.Status = "fail"
	failing.Verdict = &v
	failingJSON, _ := failing.JSON()

	// A canonical pack with a valid id that holds an unredacted secret:
	// the store's own scan must refuse it.
	var p pack.Pack
	if err := json.Unmarshal(f.pack, &p); err != nil {
		t.Fatal(err)
	}
	fake := secrettest.Make(7)
	for i := range p.Contents {
		p.Contents[i].Content += "const token = \"" + fake.GitHub + "\"\n"
		p.Contents[i].SHA256 = sha256Hex([]byte(p.Contents[i].Content))
	}
	for i := range p.KeyFiles {
		p.KeyFiles[i].Content += "const token = \"" + fake.GitHub + "\"\n"
		p.KeyFiles[i].SHA256 = sha256Hex([]byte(p.KeyFiles[i].Content))
	}
	digest, err := pack.ContentDigest(&p)
	if err != nil {
		t.Fatal(err)
	}
	p.PackID = pack.ID(digest)
	leaky, err := pack.Marshal(&p)
	if err != nil {
		t.Fatal(err)
	}
	leakyRec := rec
	leakyRec.PackID = p.PackID
	leakyRec.Digests.PackSHA256 = "sha256:" + sha256Hex(leaky)
	leakyRecJSON, _ := leakyRec.JSON()

	edited := bytes.Replace(f.pack, []byte("hello"), []byte("HELLO"), 1)
	for _, tc := range []struct {
		name         string
		pack, record []byte
		reason       string
	}{
		{"no record", f.pack, nil, ""},
		{"failing verdict", f.pack, failingJSON, "verdict_not_pass"},
		{"edited pack", edited, f.record, "pack_id_mismatch"},
		{"record of another pack", leaky, f.record, "other_pack"},
		{"not JSON", []byte("{"), f.record, "schema_invalid"},
		{"secret", leaky, leakyRecJSON, "secret_detected"},
	} {
		_, err := s.Put(ctx, PutInput{Pack: tc.pack, Record: tc.record})
		se := storeErr(t, err, CodeInvalidData)
		if tc.reason != "" && se.Details["reason"] != tc.reason {
			t.Errorf("%s: reason %v, want %s (%s)", tc.name, se.Details["reason"], tc.reason, se.Message)
		}
		msg, _ := json.Marshal(se)
		if strings.Contains(string(msg), fake.GitHub) {
			t.Errorf("%s: the error holds the secret", tc.name)
		}
	}
	if list, _ := s.List(ctx, ""); len(list) != 0 {
		t.Fatalf("refused packs were stored: %+v", list)
	}
}

func TestWriteRevisions(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	s := openStore(t, "", newClock(), nil)
	v := put(t, s, f, "pr-7")

	// An update needs expected_revision; a stale one is a conflict that
	// names the sections changed since.
	_, err := s.Write(ctx, WriteInput{ID: v.ID, Document: doc(t, review())})
	storeErr(t, err, CodeInvalidData)
	res, err := s.Write(ctx, WriteInput{Name: "pr-7", ExpectedRevision: rev(1), Document: doc(t, map[string]any{"scope": "a", "findings": "b"})})
	if err != nil || res.View.Revision != 2 || !res.Persisted || strings.Join(res.ChangedSectionKeys, ",") != "findings,scope" {
		t.Fatalf("first write: %+v %v", res, err)
	}
	res, err = s.Write(ctx, WriteInput{ID: v.ID, ExpectedRevision: rev(2), Document: doc(t, map[string]any{"scope": "a", "findings": "c", "notes": "n"})})
	if err != nil || res.View.Revision != 3 {
		t.Fatalf("second write: %+v %v", res, err)
	}
	_, err = s.Write(ctx, WriteInput{ID: v.ID, ExpectedRevision: rev(2), Document: doc(t, map[string]any{"scope": "x"})})
	se := storeErr(t, err, CodeRevisionConflict)
	if se.Details["expected_revision"] != 2 || se.Details["current_revision"] != 3 || se.Details["actual_revision"] != 3 ||
		fmt.Sprint(se.Details["changed_section_keys"]) != "[findings notes]" || se.Details["last_updated_at"] == "" || se.Details["guidance"] == "" {
		t.Fatalf("conflict details: %v", se.Details)
	}
	_, err = s.Write(ctx, WriteInput{ID: v.ID, ExpectedRevision: rev(1), Document: doc(t, map[string]any{"scope": "x"})})
	se = storeErr(t, err, CodeRevisionConflict)
	if fmt.Sprint(se.Details["changed_section_keys"]) != "[findings notes scope]" {
		t.Fatalf("changes since revision 1: %v", se.Details)
	}
	// validate_only checks and keeps nothing.
	res, err = s.Write(ctx, WriteInput{ID: v.ID, ExpectedRevision: rev(3), Document: doc(t, map[string]any{"scope": "y"}), ValidateOnly: true})
	if err != nil || res.Persisted || !res.ValidateOnly {
		t.Fatalf("validate_only: %+v %v", res, err)
	}
	got, _ := s.Get(ctx, Target{ID: v.ID})
	if got.Revision != 3 || string(got.Document["scope"]) != `"a"` {
		t.Fatalf("validate_only persisted: %+v", got)
	}
	// Bad documents.
	for _, bad := range []string{`[]`, `"x"`, `{"Scope":1}`, `{"a":1,"a":2}`, `{"a":{"b":1,"b":2}}`, `{"a":1} {}`, ``, `null`} {
		_, err := s.Write(ctx, WriteInput{ID: v.ID, ExpectedRevision: rev(3), Document: json.RawMessage(bad)})
		storeErr(t, err, CodeInvalidData)
	}
	if _, err := s.Write(ctx, WriteInput{ID: v.ID, ExpectedRevision: rev(3), Status: "done", Document: doc(t, review())}); err == nil {
		t.Fatal("bad status accepted")
	}
}

func TestWriteSecretScanned(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	s := openStore(t, "", newClock(), nil)
	v := put(t, s, f, "")
	fake := secrettest.Make(11)
	d := review()
	d["findings"] = []any{map[string]any{"description": "the key " + fake.AWSKeyID + " leaked", "refs": []string{"main.go:1"}}}
	_, err := s.Write(ctx, WriteInput{ID: v.ID, ExpectedRevision: rev(1), Document: doc(t, d)})
	se := storeErr(t, err, CodeInvalidData)
	out, _ := json.Marshal(se)
	if strings.Contains(string(out), fake.AWSKeyID) {
		t.Fatalf("the error holds the secret: %s", out)
	}
	rows, _ := se.Details["findings"].([]map[string]any)
	if se.Details["reason"] != "secret_detected" || len(rows) == 0 || rows[0]["pointer"] != "/findings/0/description" {
		t.Fatalf("details: %v", se.Details)
	}
	if got, _ := s.Get(ctx, Target{ID: v.ID}); got.Revision != 1 {
		t.Fatalf("a refused write changed the entry: %+v", got)
	}
	// A secret in the name of a new entry is refused too.
	_, err = s.Write(ctx, WriteInput{Name: fake.GitHub, Document: doc(t, map[string]any{"scope": "x"})})
	storeErr(t, err, CodeInvalidData)
}

// A secret the rules know only by its key (password = …, an AWS secret
// key) is found in a document's members as it is in a packed JSON file.
func TestWriteScansKeyAndValueTogether(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	s := openStore(t, "", newClock(), nil)
	v := put(t, s, f, "")
	fake := secrettest.Make(12)
	for _, tc := range []struct {
		name, pointer, value string
		section              map[string]any
	}{
		{"password member", "/cfg/db_password", fake.DBPassword,
			map[string]any{"db_password": fake.DBPassword}},
		{"aws secret member", "/cfg/aws_secret_access_key", fake.AWSSecret,
			map[string]any{"aws_secret_access_key": fake.AWSSecret}},
		{"nested under an array", "/cfg/items/0/password", fake.DBPassword,
			map[string]any{"items": []any{map[string]any{"password": fake.DBPassword}}}},
	} {
		d := review()
		d["cfg"] = tc.section
		_, err := s.Write(ctx, WriteInput{ID: v.ID, ExpectedRevision: rev(1), Document: doc(t, d)})
		if err == nil {
			t.Errorf("%s: a document with a secret was written", tc.name)
			continue
		}
		se := storeErr(t, err, CodeInvalidData)
		out, _ := json.Marshal(se)
		if strings.Contains(string(out), tc.value) {
			t.Errorf("%s: the error holds the secret", tc.name)
		}
		rows, _ := se.Details["findings"].([]map[string]any)
		if len(rows) == 0 || rows[0]["pointer"] != tc.pointer {
			t.Errorf("%s: findings %v, want one at %s", tc.name, rows, tc.pointer)
		}
	}
	// The same keys with harmless values are written.
	d := review()
	d["cfg"] = map[string]any{"password_policy": "rotate every 90 days", "retries": 3}
	if _, err := s.Write(ctx, WriteInput{ID: v.ID, ExpectedRevision: rev(1), Document: doc(t, d)}); err != nil {
		t.Fatalf("a harmless document was refused: %v", err)
	}
}

func TestFinalize(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	for _, withRepo := range []bool{true, false} {
		t.Run(fmt.Sprintf("repo=%t", withRepo), func(t *testing.T) {
			var files Files
			if withRepo {
				files = f.files(t)
			}
			s := openStore(t, "", newClock(), files)
			v := put(t, s, f, "")
			// Missing sections and fields.
			_, err := s.Write(ctx, WriteInput{ID: v.ID, ExpectedRevision: rev(1), Status: StatusFinalized,
				Document: doc(t, map[string]any{"scope": map[string]any{"description": "  "}, "qa": map[string]any{"notes": "x"}})})
			se := storeErr(t, err, CodeFinalizeValidation)
			if fmt.Sprint(se.Details["missing_sections"]) != "[findings]" || fmt.Sprint(se.Details["missing_fields"]) != "[scope.description qa.verdict]" {
				t.Fatalf("checklist details: %v", se.Details)
			}
			// Broken refs.
			_, err = s.Write(ctx, WriteInput{ID: v.ID, ExpectedRevision: rev(1), Status: StatusFinalized,
				Document: doc(t, review("main.go:9-11", "main.go:10-40", "gone.go:1", "main.go", "../x:1"))})
			se = storeErr(t, err, CodeFinalizeValidation)
			bad, _ := se.Details["invalid_refs"].([]InvalidRef)
			reasons := map[string]string{}
			for _, r := range bad {
				reasons[r.Ref] = r.Reason
				if r.Section != "findings" || !strings.HasPrefix(r.Pointer, "/findings/0/refs/") {
					t.Errorf("ref location: %+v", r)
				}
			}
			want := map[string]string{"main.go:10-40": RefOutOfRange, "gone.go:1": RefPathNotFound, "main.go": RefMalformed, "../x:1": RefMalformed}
			if !withRepo {
				want["main.go:10-40"] = RefUnverifiable
			}
			if fmt.Sprint(reasons) != fmt.Sprint(want) {
				t.Fatalf("invalid refs %v, want %v", reasons, want)
			}
			// Draft writes keep the broken refs; finalize is what checks.
			if _, err := s.Write(ctx, WriteInput{ID: v.ID, ExpectedRevision: rev(1), Document: doc(t, review("gone.go:1"))}); err != nil {
				t.Fatalf("draft with a broken ref: %v", err)
			}
			res, err := s.Write(ctx, WriteInput{ID: v.ID, ExpectedRevision: rev(2), Status: StatusFinalized, Document: doc(t, review())})
			if err != nil || res.View.Status != StatusFinalized || res.View.Revision != 3 {
				t.Fatalf("finalize: %+v %v", res, err)
			}
			// A finalized entry stays finalized only with a document that passes.
			_, err = s.Write(ctx, WriteInput{ID: v.ID, ExpectedRevision: rev(3), Document: doc(t, map[string]any{"scope": "x"})})
			storeErr(t, err, CodeFinalizeValidation)
			if res, err := s.Write(ctx, WriteInput{ID: v.ID, ExpectedRevision: rev(3), Status: StatusDraft, Document: doc(t, map[string]any{"scope": "x"})}); err != nil || res.View.Status != StatusDraft {
				t.Fatalf("back to draft: %+v %v", res, err)
			}
		})
	}
}

// A work-tree pack's refs resolve against the work tree: a line edited
// after packing is content_changed.
func TestFinalizeWorktreeContentChanged(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.repo.Write("main.go", mainGo+"// more\n")
	run := packWorktree(t, f.repo.Dir)
	s := openStore(t, "", newClock(), f.files(t))
	res, err := s.Put(ctx, PutInput{Pack: run[0], Record: run[1]})
	if err != nil {
		t.Fatal(err)
	}
	id := res.View.ID
	if _, err := s.Write(ctx, WriteInput{ID: id, ExpectedRevision: rev(1), Status: StatusFinalized, Document: doc(t, review("main.go:9-12"))}); err != nil {
		t.Fatalf("finalize before the edit: %v", err)
	}
	f.repo.Write("main.go", strings.Replace(mainGo, `"hello"`, `"bye"`, 1)+"// more\n")
	_, err = s.Write(ctx, WriteInput{ID: id, ExpectedRevision: rev(2), Status: StatusFinalized, Document: doc(t, review("main.go:9-12"))})
	se := storeErr(t, err, CodeFinalizeValidation)
	bad := se.Details["invalid_refs"].([]InvalidRef)
	if len(bad) != 1 || bad[0].Reason != RefChanged || !strings.Contains(bad[0].Detail, "line 10") {
		t.Fatalf("invalid refs: %+v", bad)
	}
}

func TestDocumentOnlyEntries(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, "", newClock(), nil)
	res, err := s.Write(ctx, WriteInput{Name: "handoff", Document: doc(t, map[string]any{"scope": "notes"})})
	if err != nil || !res.Created || !ValidID(res.View.ID) || res.View.Revision != 1 || res.View.Pack != nil {
		t.Fatalf("create: %+v %v", res, err)
	}
	// A create takes no expected_revision without an id or name.
	_, err = s.Write(ctx, WriteInput{ExpectedRevision: rev(1), Document: doc(t, map[string]any{"scope": "notes"})})
	storeErr(t, err, CodeInvalidData)
	_, err = s.Write(ctx, WriteInput{ID: res.View.ID, ExpectedRevision: rev(1), Status: StatusFinalized, Document: doc(t, review())})
	se := storeErr(t, err, CodeFinalizeValidation)
	if bad := se.Details["invalid_refs"].([]InvalidRef); len(bad) != 1 || bad[0].Reason != RefNoPack {
		t.Fatalf("refs of a document-only entry: %+v", bad)
	}
	d := review()
	d["findings"] = map[string]any{"description": "none found"}
	if _, err := s.Write(ctx, WriteInput{ID: res.View.ID, ExpectedRevision: rev(1), Status: StatusFinalized, Document: doc(t, d)}); err != nil {
		t.Fatalf("finalize without refs: %v", err)
	}
	out, err := s.Read(ctx, ReadInput{Target: Target{Name: "handoff"}})
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, out, "document: scope", "none found", "- selected_status: finalized", "- pack_id: "+res.View.ID)
}

func TestFreshnessTTLGrace(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	c := newClock()
	s := openStore(t, "", c, nil) // ttl 1h, expiring soon 10m, grace 900s
	v := put(t, s, f, "pr-9")
	state := func() string {
		t.Helper()
		for _, fr := range []string{Fresh, ExpiringSoon, Expired} {
			l, err := s.List(ctx, fr)
			if err != nil {
				t.Fatal(err)
			}
			if len(l) == 1 {
				return l[0].FreshnessState
			}
		}
		return "unavailable"
	}
	if state() != Fresh {
		t.Fatalf("new entry is %s", state())
	}
	c.Add(50*time.Minute + time.Second)
	if state() != ExpiringSoon {
		t.Fatalf("at 50m: %s", state())
	}
	l, _ := s.List(ctx, "")
	if len(l) != 1 || !strings.Contains(l[0].Warning, "expiring soon") || l[0].TTLRemaining != 9*60+59 {
		t.Fatalf("default list near expiry: %+v", l)
	}
	c.Add(10 * time.Minute)
	if state() != Expired {
		t.Fatalf("at 60m: %s", state())
	}
	if l, _ := s.List(ctx, ""); len(l) != 0 {
		t.Fatalf("default list shows an expired pack: %+v", l)
	}
	// Readable only when asked for with freshness=expired.
	_, err := s.Read(ctx, ReadInput{Target: Target{Name: "pr-9"}})
	storeErr(t, err, CodeExpired)
	_, err = s.Read(ctx, ReadInput{Target: Target{ID: v.ID}})
	storeErr(t, err, CodeExpired)
	out, err := s.Read(ctx, ReadInput{Target: Target{Name: "pr-9", Freshness: Expired}})
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, out, "- freshness_state: expired", "- ttl_remaining: 0s", "- warning: expired at")
	// Past the grace window it is gone.
	c.Add(900 * time.Second)
	if state() != "unavailable" {
		t.Fatalf("past the grace: %s", state())
	}
	_, err = s.Read(ctx, ReadInput{Target: Target{ID: v.ID, Freshness: Expired}})
	se := storeErr(t, err, CodeNotFound)
	if se.Details["reason"] != "expired_past_grace" {
		t.Fatalf("details: %v", se.Details)
	}
	_, err = s.TTL(ctx, TTLInput{Target: Target{ID: v.ID}, ExtendMinutes: rev(30)})
	storeErr(t, err, CodeNotFound)
}

func TestTTLActions(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	c := newClock()
	s := openStore(t, "", c, nil)
	v := put(t, s, f, "pr-1")
	for _, in := range []TTLInput{
		{Target: Target{ID: v.ID}},
		{Target: Target{ID: v.ID}, TTLMinutes: rev(5), ExtendMinutes: rev(5)},
		{Target: Target{ID: v.ID}, TTLMinutes: rev(0)},
		{Target: Target{ID: v.ID}, ExtendMinutes: rev(1 << 30)},
	} {
		_, err := s.TTL(ctx, in)
		storeErr(t, err, CodeInvalidData)
	}
	got, err := s.TTL(ctx, TTLInput{Target: Target{ID: v.ID}, TTLMinutes: rev(5)})
	if err != nil || got.TTLRemaining != 300 || got.FreshnessState != ExpiringSoon {
		t.Fatalf("ttl_minutes: %+v %v", got, err)
	}
	got, err = s.TTL(ctx, TTLInput{Target: Target{Name: "pr-1"}, ExtendMinutes: rev(60)})
	if err != nil || got.TTLRemaining != 65*60 || got.FreshnessState != Fresh {
		t.Fatalf("extend_minutes: %+v %v", got, err)
	}
	// An expired entry within its grace can be given a new life, by name too.
	c.Add(66 * time.Minute)
	got, err = s.TTL(ctx, TTLInput{Target: Target{Name: "pr-1"}, ExtendMinutes: rev(30)})
	if err != nil || got.FreshnessState != Fresh || got.TTLRemaining != 30*60 {
		t.Fatalf("revive: %+v %v", got, err)
	}
}

func TestNameResolution(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	s := openStore(t, "", c, nil)
	create := func() string {
		t.Helper()
		res, err := s.Write(ctx, WriteInput{Name: "pr-5", Document: doc(t, map[string]any{"scope": "x", "findings": "y", "qa": map[string]any{"verdict": "pass"}})})
		if err != nil {
			t.Fatal(err)
		}
		return res.View.ID
	}
	a, b := create(), create() // same updated_at, same revision
	_, err := s.Read(ctx, ReadInput{Target: Target{Name: "pr-5"}})
	se := storeErr(t, err, CodeAmbiguous)
	want := []string{a, b}
	sort.Strings(want)
	if fmt.Sprint(se.Details["candidate_ids"]) != fmt.Sprint(want) {
		t.Fatalf("candidate_ids %v, want %v", se.Details["candidate_ids"], want)
	}
	// A tie on updated_at is broken by the revision...
	if _, err := s.Write(ctx, WriteInput{ID: a, ExpectedRevision: rev(1), Document: doc(t, map[string]any{"scope": "x2"})}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, Target{Name: "pr-5"}); err != nil || got.ID != a || got.Selection.SelectedBy != SelectedByRevision {
		t.Fatalf("by revision: %+v %v", got, err)
	}
	// ...the latest updated_at wins over the revision...
	c.Add(time.Second)
	if _, err := s.Write(ctx, WriteInput{ID: b, ExpectedRevision: rev(1), Document: doc(t, map[string]any{"scope": "x3"})}); err != nil {
		t.Fatal(err)
	}
	c.Add(time.Second)
	cc := create()
	if got, err := s.Get(ctx, Target{Name: "pr-5"}); err != nil || got.ID != cc || got.Selection.SelectedBy != SelectedByUpdatedAt || got.Selection.SelectedRevision != 1 {
		t.Fatalf("by updated_at: %+v %v", got, err)
	}
	// ...and finalized wins over everything.
	c.Add(-10 * time.Second)
	if _, err := s.Write(ctx, WriteInput{ID: a, ExpectedRevision: rev(2), Status: StatusFinalized, Document: doc(t, map[string]any{"scope": "x", "findings": "y", "qa": map[string]any{"verdict": "pass"}})}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, Target{Name: "pr-5"})
	if err != nil || got.ID != a || got.Selection.SelectedBy != SelectedByStatus || got.Selection.SelectedStatus != StatusFinalized {
		t.Fatalf("by status: %+v %v", got, err)
	}
}

// Two stores on one directory stand for two processes: each revision is
// written once, every other writer gets revision_conflict, and no write is
// lost or torn.
func TestConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	dir := t.TempDir()
	s1 := openStore(t, dir, c, nil)
	s2 := openStore(t, dir, c, nil)
	res, err := s1.Write(ctx, WriteInput{Name: "shared", Document: doc(t, map[string]any{"scope": "0"})})
	if err != nil {
		t.Fatal(err)
	}
	id := res.View.ID
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, conflicts := 0, 0
	for w := range 8 {
		s := []*Store{s1, s2}[w%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				cur, err := s.Get(ctx, Target{ID: id})
				if err != nil {
					t.Error(err)
					return
				}
				_, err = s.Write(ctx, WriteInput{ID: id, ExpectedRevision: rev(cur.Revision), Document: doc(t, map[string]any{"scope": fmt.Sprintf("w%d-%d", w, i)})})
				mu.Lock()
				if err == nil {
					wins++
				} else if se, ok := err.(*Error); ok && se.Code == CodeRevisionConflict {
					conflicts++
				} else {
					t.Error(err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	got, err := s2.Get(ctx, Target{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	if got.Revision != 1+wins || wins+conflicts != 40 || wins == 0 {
		t.Fatalf("revision %d after %d wins and %d conflicts", got.Revision, wins, conflicts)
	}
}

func TestReadProfilesAndPaging(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	s := openStore(t, "", newClock(), f.files(t))
	v := put(t, s, f, "pr-3")
	if _, err := s.Write(ctx, WriteInput{ID: v.ID, ExpectedRevision: rev(1), Document: doc(t, review("main.go:9-11", "main.go:10-99"))}); err != nil {
		t.Fatal(err)
	}
	for _, profile := range transparency.ReadProfiles {
		var seen []string
		token := ""
		for page := 0; ; page++ {
			out, err := s.Read(ctx, ReadInput{Target: Target{Name: "pr-3"}, Profile: profile, Limit: 2, PageToken: token})
			if token != "" {
				out, err = s.Read(ctx, ReadInput{Target: Target{Name: "pr-3"}, PageToken: token})
			}
			if err != nil {
				t.Fatalf("%s page %d: %v", profile, page, err)
			}
			mustContain(t, out, "- selected_by: name:only_candidate", "- selected_revision: 2", "- selected_status: draft", "- freshness_state: fresh", "- profile: "+profile)
			for _, line := range strings.Split(out, "\n") {
				if strings.HasPrefix(line, "## [") {
					seen = append(seen, line)
				}
			}
			if page == 0 {
				mustContain(t, out, "document: scope", "document: qa")
			}
			token = legendValue(out, "next_page_token")
			if token == "none" {
				break
			}
		}
		full, _ := s.Read(ctx, ReadInput{Target: Target{Name: "pr-3"}, Profile: profile, Limit: 1000})
		if n := strings.Count(full, "\n## ["); len(seen) != n {
			t.Fatalf("%s: paged %d chunks, the whole has %d", profile, len(seen), n)
		}
		mustContain(t, full, "`main.go:9-11` — resolves", "`main.go:10-99` — ⚠️ stale: line_out_of_range")
		if profile == transparency.ProfileReviewer {
			mustContain(t, full, "func greeting() string {")
		} else if strings.Contains(full, "```json") {
			t.Fatalf("%s: compact profile fences the document", profile)
		}
	}
	// A write between pages makes the token stale.
	out, _ := s.Read(ctx, ReadInput{Target: Target{ID: v.ID}, Limit: 1})
	token := legendValue(out, "next_page_token")
	if _, err := s.Write(ctx, WriteInput{ID: v.ID, ExpectedRevision: rev(2), Document: doc(t, review())}); err != nil {
		t.Fatal(err)
	}
	_, err := s.Read(ctx, ReadInput{Target: Target{ID: v.ID}, PageToken: token})
	se := storeErr(t, err, CodeInvalidData)
	if !strings.Contains(se.Message, InvalidPageToken) {
		t.Fatalf("stale token message: %s", se.Message)
	}
	_, err = s.Read(ctx, ReadInput{Target: Target{ID: v.ID}, PageToken: "garbage"})
	storeErr(t, err, CodeInvalidData)
}

func legendValue(out, key string) string {
	i := strings.LastIndex(out, "## LEGEND")
	for _, line := range strings.Split(out[i:], "\n") {
		if v, ok := strings.CutPrefix(line, "- "+key+": "); ok {
			return v
		}
	}
	return ""
}

func TestImportArtifact(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, ArtifactPack), f.pack, 0o644)
	os.WriteFile(filepath.Join(dir, ArtifactRecord), f.record, 0o644)
	zipPath := filepath.Join(t.TempDir(), "artifact.zip")
	writeZip(t, zipPath, map[string][]byte{"pack.json": f.pack, "pack.record.json": f.record, "summary.md": []byte("x")})
	single := filepath.Join(t.TempDir(), "out.json")
	os.WriteFile(single, f.pack, 0o644)
	os.WriteFile(single+".record.json", f.record, 0o644)
	prepush := t.TempDir()
	os.WriteFile(filepath.Join(prepush, "abc123.pack.json"), f.pack, 0o644)
	os.WriteFile(filepath.Join(prepush, "abc123.record.json"), f.record, 0o644)
	for _, p := range []string{dir, zipPath, single, filepath.Join(dir, ArtifactPack), filepath.Join(prepush, "abc123.pack.json")} {
		in, err := ReadArtifact(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		s := openStore(t, "", newClock(), nil)
		if _, err := s.Put(ctx, in); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.zip")
	writeZip(t, bad, map[string][]byte{"pack.json": f.pack})
	if _, err := ReadArtifact(bad); err == nil || !strings.Contains(err.Error(), "pack.record.json") {
		t.Fatalf("zip without a record: %v", err)
	}
}

// The store follows no link in its directory (the default store is in the
// repository's .git, which a repository from elsewhere fills): a link for
// packs/, for an entry's directory or for the lock file is refused, and
// nothing is written where it points.
func TestStoreFollowsNoLink(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	c := newClock()
	sc, err := testScanner()
	if err != nil {
		t.Fatal(err)
	}
	nothingWritten := func(t *testing.T, outside string) {
		t.Helper()
		filepath.WalkDir(outside, func(p string, d fs.DirEntry, err error) error {
			if err == nil && p != outside {
				t.Errorf("wrote %s where the link points", p)
			}
			return err
		})
	}

	t.Run("packs", func(t *testing.T) {
		dir, outside := t.TempDir(), t.TempDir()
		if err := os.Symlink(outside, filepath.Join(dir, packsDir)); err != nil {
			t.Skip(err)
		}
		_, err := Open(Options{Dir: dir, Scanner: sc})
		if err == nil || !strings.Contains(err.Error(), "packs is a symbolic link") {
			t.Fatalf("open: %v", err)
		}
		nothingWritten(t, outside)
	})
	t.Run("entry", func(t *testing.T) {
		dir, outside := t.TempDir(), t.TempDir()
		s := openStore(t, dir, c, nil)
		v := put(t, s, f, "pr-1")
		entry := filepath.Join(dir, packsDir, v.ID)
		before, err := os.ReadFile(filepath.Join(entry, entryFile))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(entry, filepath.Join(outside, v.ID)); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(outside, v.ID), entry); err != nil {
			t.Skip(err)
		}
		_, err = s.Write(ctx, WriteInput{ID: v.ID, ExpectedRevision: rev(1), Document: doc(t, review())})
		if err == nil || !strings.Contains(err.Error(), "not a directory") {
			t.Fatalf("write through a linked entry: %v", err)
		}
		if after, _ := os.ReadFile(filepath.Join(outside, v.ID, entryFile)); !bytes.Equal(after, before) {
			t.Fatal("the entry was written where the link points")
		}
	})
	t.Run("pack file", func(t *testing.T) {
		// A pack planted as a link to a file of the user's is not served.
		dir := t.TempDir()
		s := openStore(t, dir, c, nil)
		v := put(t, s, f, "pr-1")
		secret := filepath.Join(t.TempDir(), "id_rsa")
		if err := os.WriteFile(secret, []byte("not for the store\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, packsDir, v.ID, packFile)
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(secret, p); err != nil {
			t.Skip(err)
		}
		if data, _, err := s.PackBytes(ctx, Target{ID: v.ID}); err == nil || bytes.Contains(data, []byte("not for the store")) {
			t.Fatalf("PackBytes through a linked pack file: %q, %v", data, err)
		}
	})
	t.Run("pack bytes checked", func(t *testing.T) {
		// A pack changed in place is damaged, as Get already says.
		dir := t.TempDir()
		s := openStore(t, dir, c, nil)
		v := put(t, s, f, "pr-1")
		if err := os.WriteFile(filepath.Join(dir, packsDir, v.ID, packFile), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.PackBytes(ctx, Target{ID: v.ID}); err == nil || !strings.Contains(err.Error(), "damaged") {
			t.Fatalf("PackBytes of a changed pack: %v", err)
		}
	})
	t.Run("lock", func(t *testing.T) {
		dir, outside := t.TempDir(), t.TempDir()
		s := openStore(t, dir, c, nil)
		if err := os.Symlink(filepath.Join(outside, "made"), filepath.Join(dir, lockFile)); err != nil {
			t.Skip(err)
		}
		if _, err := s.List(ctx, ""); err == nil || !strings.Contains(err.Error(), ".lock is a symbolic link") {
			t.Fatalf("list with a linked lock file: %v", err)
		}
		nothingWritten(t, outside)
	})
}
