package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeKeys(t *testing.T) (priv, pub string) {
	pk, sk, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	skDER, _ := x509.MarshalPKCS8PrivateKey(sk)
	pkDER, _ := x509.MarshalPKIXPublicKey(pk)
	priv, pub = filepath.Join(dir, "key.pem"), filepath.Join(dir, "key.pub.pem")
	os.WriteFile(priv, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: skDER}), 0o600)
	os.WriteFile(pub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkDER}), 0o644)
	return priv, pub
}

func TestNotesLogAndVerify(t *testing.T) {
	g := fixtureRepo(t)
	out := filepath.Join(t.TempDir(), "p.json")
	for _, rev := range []string{"main~1", "main"} {
		g.Git("checkout", "-q", rev)
		if code, _, stderr := runCLI(t, "pack", "-C", g.Dir, "--commit", "HEAD", "--notes", "-o", out); code != 0 {
			t.Fatalf("pack --notes at %s: %s", rev, stderr)
		}
	}
	code, stdout, stderr := runCLI(t, "log", "-C", g.Dir)
	if code != 0 || strings.Count(stdout, "pass") != 2 || !strings.Contains(stdout, "pk_") {
		t.Fatalf("log: %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, "verify", "-C", g.Dir)
	if code != 0 || !strings.Contains(stdout, "2 record(s), chain intact") {
		t.Fatalf("verify: %d\n%s%s", code, stdout, stderr)
	}
	// Replace the newest note's parent record by a different (canonical) one.
	g.Git("checkout", "-q", "main~1")
	if code, _, stderr := runCLI(t, "pack", "-C", g.Dir, "--commit", "HEAD", "--notes", "--max-files", "1", "-o", out); code != 0 {
		t.Fatalf("re-pack: %s", stderr)
	}
	g.Git("checkout", "-q", "main")
	code, stdout, _ = runCLI(t, "verify", "-C", g.Dir)
	if code != 1 || !strings.Contains(stdout, "BREAK") {
		t.Fatalf("verify after edit: %d\n%s", code, stdout)
	}
}

func TestAttestAndVerifyAttestation(t *testing.T) {
	g := fixtureRepo(t)
	priv, pub := writeKeys(t)
	dir := t.TempDir()
	packFile, att := filepath.Join(dir, "p.json"), filepath.Join(dir, "p.intoto.json")
	if code, _, stderr := runCLI(t, "pack", "-C", g.Dir, "--commit", "HEAD", "-o", packFile, "--attest", att, "--sign-key", priv); code != 0 {
		t.Fatalf("pack: %s", stderr)
	}
	if _, err := os.Stat(packFile + ".record.json"); err != nil {
		t.Fatal("no record beside the pack")
	}
	code, stdout, stderr := runCLI(t, "verify-attestation", att, "--pack", packFile, "--pub", pub)
	if code != 0 || !strings.Contains(stdout, "ok:") {
		t.Fatalf("verify: %d %s %s", code, stdout, stderr)
	}
	data, _ := os.ReadFile(packFile)
	os.WriteFile(packFile, append(data, ' '), 0o644)
	code, _, stderr = runCLI(t, "verify-attestation", att, "--pack", packFile, "--pub", pub)
	if code != 1 || !strings.Contains(stderr, "does not match") {
		t.Fatalf("tampered pack: %d %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "verify-attestation", att); code != 2 || !strings.Contains(stderr, "--pack is required") {
		t.Fatalf("missing --pack: %d %s", code, stderr)
	}
}

func TestAuditAndReadCommands(t *testing.T) {
	g := fixtureRepo(t)
	packFile := filepath.Join(t.TempDir(), "p.json")
	if code, _, stderr := runCLI(t, "pack", "-C", g.Dir, "--commit", "HEAD", "-o", packFile); code != 0 {
		t.Fatal(stderr)
	}
	code, stdout, _ := runCLI(t, "audit", packFile, "--repo", g.Dir)
	if code != 0 || !strings.Contains(stdout, "verdict: pass") {
		t.Fatalf("audit: %d %s", code, stdout)
	}
	data, _ := os.ReadFile(packFile)
	os.WriteFile(packFile, []byte(strings.Replace(string(data), `"pack_id":"pk_`, `"pack_id":"pk_a`, 1)), 0o644)
	code, stdout, _ = runCLI(t, "audit", packFile, "--json")
	if code != 1 || !strings.Contains(stdout, `"code": "schema_invalid"`) || !strings.Contains(stdout, `"kind": "validation"`) {
		t.Fatalf("tampered audit: %d %s", code, stdout)
	}
	os.WriteFile(packFile, data, 0o644)
	code, stdout, stderr := runCLI(t, "read", packFile, "--limit", "1")
	if code != 0 || !strings.Contains(stdout, "next_page_token") || !strings.Contains(stdout, "has_more") {
		t.Fatalf("read: %d %s %s", code, stdout, stderr)
	}
	code, _, stderr = runCLI(t, "read", packFile, "--page-token", "bogus")
	if code != 2 || !strings.Contains(stderr, "invalid_page_token") {
		t.Fatalf("bad token: %d %s", code, stderr)
	}
}
