package transparency

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// attestFixture returns a record of a pack with the pack bytes.
func attestFixture(t *testing.T) (*Record, []byte) {
	t.Helper()
	in := syntheticInput()
	rec := Build(in)
	mustValid(t, rec)
	return rec, in.Result.JSON
}

func testKey(t *testing.T, seed byte) ed25519.PrivateKey {
	t.Helper()
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
}

func packSum(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

func TestAttestStatement(t *testing.T) {
	rec, packData := attestFixture(t)
	st1, err := Attest(rec, "pack.json", packSum(packData))
	if err != nil {
		t.Fatal(err)
	}
	st2, err := Attest(rec, "pack.json", "sha256:"+packSum(packData))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(st1, st2) {
		t.Fatal("the statement is not deterministic")
	}
	var doc struct {
		Type          string `json:"_type"`
		PredicateType string `json:"predicateType"`
		Subject       []struct {
			Name   string            `json:"name"`
			Digest map[string]string `json:"digest"`
		} `json:"subject"`
		Predicate json.RawMessage `json:"predicate"`
	}
	if err := json.Unmarshal(st1, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Type != "https://in-toto.io/Statement/v1" || doc.PredicateType != PredicateType {
		t.Fatalf("type %q predicate type %q", doc.Type, doc.PredicateType)
	}
	if len(doc.Subject) != 1 || doc.Subject[0].Name != "pack.json" || doc.Subject[0].Digest["sha256"] != packSum(packData) {
		t.Fatalf("subject %+v", doc.Subject)
	}
	// The predicate is the record, field for field.
	pred, err := canonicalJSON(doc.Predicate)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseRecord(pred)
	if err != nil {
		t.Fatal(err)
	}
	if back.Digest() != rec.Digest() {
		t.Fatalf("predicate is not the record:\n%s", pred)
	}
	if again, err := canonicalJSON(st1); err != nil || !bytes.Equal(again, st1) {
		t.Fatalf("statement is not canonical JSON: %s", st1)
	}

	if _, err := Attest(rec, "pack.json", strings.Repeat("0", 64)); err == nil || !strings.Contains(err.Error(), "not of sha256:") {
		t.Fatalf("attesting a record of another pack: %v", err)
	}
	if _, err := Attest(rec, "", packSum(packData)); err == nil {
		t.Fatal("empty subject name accepted")
	}
	if _, err := Attest(rec, "pack.json", "xyz"); err == nil {
		t.Fatal("bad digest accepted")
	}
}

func TestSignVerifyRoundTrip(t *testing.T) {
	rec, packData := attestFixture(t)
	st, err := Attest(rec, "pack.json", packSum(packData))
	if err != nil {
		t.Fatal(err)
	}
	key := testKey(t, 1)
	pub := key.Public().(ed25519.PublicKey)
	env, err := Sign(st, key)
	if err != nil {
		t.Fatal(err)
	}
	env2, _ := Sign(st, key)
	if !bytes.Equal(env, env2) {
		t.Fatal("the envelope is not deterministic")
	}
	var e struct {
		PayloadType string `json:"payloadType"`
		Payload     string `json:"payload"`
		Signatures  []struct {
			KeyID string `json:"keyid"`
			Sig   string `json:"sig"`
		} `json:"signatures"`
	}
	if err := json.Unmarshal(env, &e); err != nil {
		t.Fatal(err)
	}
	if e.PayloadType != "application/vnd.in-toto+json" || len(e.Signatures) != 1 || e.Signatures[0].KeyID != KeyID(pub) {
		t.Fatalf("envelope %+v", e)
	}
	sum := sha256.Sum256(pub)
	if KeyID(pub) != hex.EncodeToString(sum[:]) {
		t.Fatal("keyid is not the sha256 of the public key")
	}

	got, err := VerifyAttestation(env, packData, pub)
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest() != rec.Digest() {
		t.Fatal("verified record differs from the attested one")
	}
	// A bare statement verifies without a key.
	if got, err := VerifyAttestation(st, packData, nil); err != nil || got.PackID != rec.PackID {
		t.Fatalf("bare statement: %v", err)
	}

	tamperedPayload := func() []byte {
		body, _ := base64.StdEncoding.DecodeString(e.Payload)
		body = bytes.Replace(body, []byte(`"pack_id":"pk_abcdefgh"`), []byte(`"pack_id":"pk_hgfedcba"`), 1)
		m := map[string]any{"payloadType": e.PayloadType, "payload": base64.StdEncoding.EncodeToString(body),
			"signatures": []map[string]string{{"keyid": e.Signatures[0].KeyID, "sig": e.Signatures[0].Sig}}}
		out, _ := json.Marshal(m)
		return out
	}()
	otherKey := testKey(t, 2)
	otherPub := otherKey.Public().(ed25519.PublicKey)
	tamperedPack := append(bytes.Clone(packData), ' ')
	unsignedKeyID := func() []byte {
		m := map[string]any{"payloadType": e.PayloadType, "payload": e.Payload,
			"signatures": []map[string]string{{"keyid": "", "sig": e.Signatures[0].Sig}}}
		out, _ := json.Marshal(m)
		return out
	}()
	wrongType := bytes.Replace(env, []byte("application/vnd.in-toto+json"), []byte("text/plain"), 1)
	otherEnv, _ := Sign(st, otherKey)

	tests := []struct {
		name    string
		att     []byte
		pack    []byte
		pub     ed25519.PublicKey
		wantErr string
	}{
		{"signed", env, packData, pub, ""},
		{"signature without keyid", unsignedKeyID, packData, pub, ""},
		{"tampered pack", env, tamperedPack, pub, "pack digest sha256:" + packSum(tamperedPack) + " does not match the attested sha256:" + packSum(packData)},
		{"tampered pack, bare statement", st, tamperedPack, nil, "does not match the attested"},
		{"wrong key", env, packData, otherPub, "signature does not verify"},
		{"signed by another key", otherEnv, packData, pub, "signature does not verify"},
		{"tampered payload", tamperedPayload, packData, pub, "signature does not verify"},
		{"envelope without key", env, packData, nil, "public key is needed"},
		{"unsigned statement with key", st, packData, pub, "unsigned"},
		{"wrong payload type", wrongType, packData, pub, "payload type"},
		{"not json", []byte("nope"), packData, pub, "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := VerifyAttestation(tt.att, tt.pack, tt.pub)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestVerifyRejectsForeignStatements(t *testing.T) {
	rec, packData := attestFixture(t)
	st, err := Attest(rec, "pack.json", packSum(packData))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(st, &m); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		mutate  func(m map[string]any)
		wantErr string
	}{
		{"predicate type", func(m map[string]any) { m["predicateType"] = "https://slsa.dev/provenance/v1" }, "predicate type"},
		{"two subjects", func(m map[string]any) {
			s := m["subject"].([]any)
			m["subject"] = append(s, s[0])
		}, "2 subjects"},
		{"no sha256", func(m map[string]any) {
			m["subject"].([]any)[0].(map[string]any)["digest"] = map[string]any{"sha512": strings.Repeat("0", 128)}
		}, "subject digest"},
		{"record of another pack", func(m map[string]any) {
			m["predicate"].(map[string]any)["digests"].(map[string]any)["pack_sha256"] = "sha256:" + strings.Repeat("0", 64)
		}, "attested record is of pack"},
		{"statement type", func(m map[string]any) { m["_type"] = "https://in-toto.io/Statement/v0.1" }, "statement type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c map[string]any
			_ = json.Unmarshal(st, &c)
			tt.mutate(c)
			data, _ := json.Marshal(c)
			if _, err := VerifyAttestation(data, packData, nil); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func TestLoadKeys(t *testing.T) {
	key := testKey(t, 3)
	pub := key.Public().(ed25519.PublicKey)
	privDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	rsaDER, _ := x509.MarshalPKCS8PrivateKey(rsaKey)
	rsaPubDER, _ := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalPKCS8PrivateKey(ecKey)
	ecPubDER, _ := x509.MarshalPKIXPublicKey(&ecKey.PublicKey)
	ecSEC1, _ := x509.MarshalECPrivateKey(ecKey)

	dir := t.TempDir()
	privFile := filepath.Join(dir, "key.pem")
	pubFile := filepath.Join(dir, "key.pub")
	if err := os.WriteFile(privFile, pemBlock("PRIVATE KEY", privDER), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pubFile, pemBlock("PUBLIC KEY", pubDER), 0o644); err != nil {
		t.Fatal(err)
	}

	if k, err := LoadPrivateKey(privFile); err != nil || !k.Equal(key) {
		t.Fatalf("private key from file: %v", err)
	}
	if k, err := LoadPrivateKey(string(pemBlock("PRIVATE KEY", privDER))); err != nil || !k.Equal(key) {
		t.Fatalf("private key from PEM text: %v", err)
	}
	if k, err := LoadPublicKey(pubFile); err != nil || !k.Equal(pub) {
		t.Fatalf("public key from file: %v", err)
	}

	tests := []struct {
		name    string
		load    func(string) error
		src     string
		wantErr string
	}{
		{"rsa private", loadPriv, string(pemBlock("PRIVATE KEY", rsaDER)), "an RSA key"},
		{"ecdsa private", loadPriv, string(pemBlock("PRIVATE KEY", ecDER)), "an ECDSA key"},
		{"sec1 private", loadPriv, string(pemBlock("EC PRIVATE KEY", ecSEC1)), "an EC key"},
		{"pkcs1 private", loadPriv, string(pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey))), "an RSA key"},
		{"openssh private", loadPriv, string(pemBlock("OPENSSH PRIVATE KEY", []byte("x"))), "OpenSSH"},
		{"encrypted private", loadPriv, string(pemBlock("ENCRYPTED PRIVATE KEY", []byte("x"))), "encrypted"},
		{"public as private", loadPriv, pubFile, "this is a public key"},
		{"garbage", loadPriv, string("-----BEGIN nothing"), "no PEM block"},
		{"missing file", loadPriv, filepath.Join(dir, "nope.pem"), "no such file"},
		{"empty", loadPriv, "", "no key file"},
		{"rsa public", loadPub, string(pemBlock("PUBLIC KEY", rsaPubDER)), "an RSA key"},
		{"ecdsa public", loadPub, string(pemBlock("PUBLIC KEY", ecPubDER)), "an ECDSA key"},
		{"private as public", loadPub, privFile, "this is a private key"},
		{"certificate", loadPub, string(pemBlock("CERTIFICATE", []byte("x"))), `"CERTIFICATE" is not an ed25519 key`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.load(tt.src)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func loadPriv(s string) error { _, err := LoadPrivateKey(s); return err }
func loadPub(s string) error  { _, err := LoadPublicKey(s); return err }
