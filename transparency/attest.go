package transparency

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ctxpack/ctxpack/pack"
	intoto "github.com/in-toto/attestation/go/v1"
	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
)

// PredicateType is the in-toto predicate type of a ctxpack record.
const PredicateType = "https://ctxpack.dev/attestation/record/v1"

// PayloadType is the DSSE payload type of an in-toto statement.
const PayloadType = "application/vnd.in-toto+json"

// Attest makes the in-toto Statement v1 of a record: one subject (the pack
// file's name and sha256), the ctxpack predicate type, and the record as the
// predicate. The output is canonical JSON (see canonicalJSON), so the same
// record gives the same bytes.
func Attest(rec *Record, packName string, packSHA256 string) ([]byte, error) {
	if rec == nil {
		return nil, errors.New("attest: no record")
	}
	if packName == "" {
		return nil, errors.New("attest: the subject needs the pack file's name")
	}
	hexSum, err := bareSHA256(packSHA256)
	if err != nil {
		return nil, fmt.Errorf("attest: pack digest: %w", err)
	}
	if rec.Digests.PackSHA256 != "sha256:"+hexSum {
		return nil, fmt.Errorf("attest: the record is of pack %s, not of sha256:%s", rec.Digests.PackSHA256, hexSum)
	}
	recJSON, err := rec.JSON()
	if err != nil {
		return nil, fmt.Errorf("attest: %w", err)
	}
	predicate := &structpb.Struct{}
	if err := protojson.Unmarshal(recJSON, predicate); err != nil {
		return nil, fmt.Errorf("attest: record as predicate: %w", err)
	}
	st := &intoto.Statement{
		Type: intoto.StatementTypeUri,
		Subject: []*intoto.ResourceDescriptor{{
			Name:   packName,
			Digest: map[string]string{"sha256": hexSum},
		}},
		PredicateType: PredicateType,
		Predicate:     predicate,
	}
	if err := st.Validate(); err != nil {
		return nil, fmt.Errorf("attest: invalid statement: %w", err)
	}
	raw, err := protojson.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("attest: serialize statement: %w", err)
	}
	return canonicalJSON(raw)
}

// canonicalJSON re-serializes JSON with pack.Marshal: compact, keys sorted,
// numbers kept as written, final newline. protojson deliberately varies its
// whitespace between builds (internal/detrand), so its output is never
// written as is.
func canonicalJSON(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("canonical JSON: %w", err)
	}
	return pack.Marshal(v)
}

// bareSHA256 accepts "sha256:<hex>" or bare hex and returns the lower-case hex.
func bareSHA256(s string) (string, error) {
	h := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(s), "sha256:"))
	if len(h) != 64 || !isLowerHex(h) {
		return "", fmt.Errorf("%q is not a sha256 digest", s)
	}
	return h, nil
}

// KeyID identifies an ed25519 public key in DSSE signatures: the lower-case
// hex sha256 of the raw 32-byte public key.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:])
}

// ed25519SignerVerifier implements dsse.SignerVerifier. A verifier needs only
// the public key.
type ed25519SignerVerifier struct {
	priv ed25519.PrivateKey
	pub  ed25519.PublicKey
}

var _ dsse.SignerVerifier = (*ed25519SignerVerifier)(nil)

func newSigner(priv ed25519.PrivateKey) (*ed25519SignerVerifier, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("ed25519 private key has %d bytes, want %d", len(priv), ed25519.PrivateKeySize)
	}
	return &ed25519SignerVerifier{priv: priv, pub: priv.Public().(ed25519.PublicKey)}, nil
}

func newVerifier(pub ed25519.PublicKey) (*ed25519SignerVerifier, error) {
	if len(pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("ed25519 public key has %d bytes, want %d", len(pub), ed25519.PublicKeySize)
	}
	return &ed25519SignerVerifier{pub: pub}, nil
}

func (s *ed25519SignerVerifier) Sign(_ context.Context, data []byte) ([]byte, error) {
	if s.priv == nil {
		return nil, errors.New("no private key")
	}
	return ed25519.Sign(s.priv, data), nil
}

func (s *ed25519SignerVerifier) Verify(_ context.Context, data, sig []byte) error {
	if !ed25519.Verify(s.pub, data, sig) {
		return errors.New("ed25519 signature does not verify")
	}
	return nil
}

func (s *ed25519SignerVerifier) KeyID() (string, error) { return KeyID(s.pub), nil }

func (s *ed25519SignerVerifier) Public() crypto.PublicKey { return s.pub }

// Sign wraps an in-toto statement in a DSSE envelope signed with an ed25519
// key. ed25519 signatures are deterministic, so is the envelope.
func Sign(statement []byte, key ed25519.PrivateKey) ([]byte, error) {
	if _, err := parseStatement(statement); err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	signer, err := newSigner(key)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	es, err := dsse.NewEnvelopeSigner(signer)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	env, err := es.SignPayload(context.Background(), PayloadType, statement)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	return pack.Marshal(env)
}

// VerifyAttestation checks an attestation against the pack bytes and returns
// the attested record. A DSSE envelope needs pub and must carry a valid
// signature by it; a bare statement is accepted only when pub is nil (with a
// key at hand, an unsigned statement fails closed). In both cases the
// statement's subject digest must equal sha256(packData) and the record must
// be of that very pack.
func VerifyAttestation(envelopeOrStatement []byte, packData []byte, pub ed25519.PublicKey) (*Record, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(envelopeOrStatement, &probe); err != nil {
		return nil, fmt.Errorf("verify attestation: not a JSON object: %w", err)
	}
	statement := envelopeOrStatement
	if _, ok := probe["payloadType"]; ok {
		body, err := verifyEnvelope(envelopeOrStatement, pub)
		if err != nil {
			return nil, fmt.Errorf("verify attestation: %w", err)
		}
		statement = body
	} else if pub != nil {
		return nil, errors.New("verify attestation: the attestation is an unsigned in-toto statement, but a public key was given: a signed DSSE envelope is required")
	}
	st, err := parseStatement(statement)
	if err != nil {
		return nil, fmt.Errorf("verify attestation: %w", err)
	}
	attested := st.GetSubject()[0].GetDigest()["sha256"]
	sum := sha256.Sum256(packData)
	actual := hex.EncodeToString(sum[:])
	if actual != attested {
		return nil, fmt.Errorf("verify attestation: pack digest sha256:%s does not match the attested sha256:%s", actual, attested)
	}
	predJSON, err := protojson.Marshal(st.GetPredicate())
	if err != nil {
		return nil, fmt.Errorf("verify attestation: predicate: %w", err)
	}
	predJSON, err = canonicalJSON(predJSON)
	if err != nil {
		return nil, fmt.Errorf("verify attestation: predicate: %w", err)
	}
	rec, err := ParseRecord(predJSON)
	if err != nil {
		return nil, fmt.Errorf("verify attestation: predicate: %w", err)
	}
	if rec.Digests.PackSHA256 != "sha256:"+attested {
		return nil, fmt.Errorf("verify attestation: the attested record is of pack %s, not of the subject sha256:%s", rec.Digests.PackSHA256, attested)
	}
	return rec, nil
}

// verifyEnvelope checks the DSSE envelope's payload type and signature and
// returns the payload.
func verifyEnvelope(data []byte, pub ed25519.PublicKey) ([]byte, error) {
	var env dsse.Envelope
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		return nil, fmt.Errorf("not a DSSE envelope: %w", err)
	}
	if env.PayloadType != PayloadType {
		return nil, fmt.Errorf("DSSE payload type %q is not %q", env.PayloadType, PayloadType)
	}
	if pub == nil {
		return nil, errors.New("the attestation is signed: a public key is needed to verify it")
	}
	v, err := newVerifier(pub)
	if err != nil {
		return nil, err
	}
	if len(env.Signatures) == 0 {
		return nil, errors.New("signature does not verify: the envelope has no signatures")
	}
	ev, err := dsse.NewEnvelopeVerifier(v)
	if err != nil {
		return nil, err
	}
	_, body, err := ev.VerifyAndDecode(context.Background(), &env)
	if err != nil {
		keyID := KeyID(pub)
		var ids []string
		for _, s := range env.Signatures {
			if s.KeyID == keyID {
				return nil, fmt.Errorf("signature does not verify: the signature by key %s is not valid for this payload", keyID)
			}
			ids = append(ids, s.KeyID)
		}
		return nil, fmt.Errorf("signature does not verify: signed by key %s, not by the given key %s", strings.Join(ids, ", "), keyID)
	}
	return body, nil
}

// parseStatement decodes and validates an in-toto Statement v1 of a ctxpack
// record with exactly one subject carrying a sha256 digest.
func parseStatement(data []byte) (*intoto.Statement, error) {
	st := &intoto.Statement{}
	if err := protojson.Unmarshal(data, st); err != nil {
		return nil, fmt.Errorf("not an in-toto statement: %w", err)
	}
	if st.GetType() != intoto.StatementTypeUri {
		return nil, fmt.Errorf("statement type %q is not %q", st.GetType(), intoto.StatementTypeUri)
	}
	if err := st.Validate(); err != nil {
		return nil, fmt.Errorf("invalid in-toto statement: %w", err)
	}
	if st.GetPredicateType() != PredicateType {
		return nil, fmt.Errorf("predicate type %q is not %q", st.GetPredicateType(), PredicateType)
	}
	if n := len(st.GetSubject()); n != 1 {
		return nil, fmt.Errorf("the statement has %d subjects, want exactly one (the pack)", n)
	}
	if _, err := bareSHA256(st.GetSubject()[0].GetDigest()["sha256"]); err != nil {
		return nil, fmt.Errorf("subject digest: %w", err)
	}
	return st, nil
}
