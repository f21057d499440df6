package audit

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/pjbgf/sha1cd"
)

// sha1Blob is git's object id of a blob with this content.
func sha1Blob(data []byte) [20]byte {
	h := sha1.New()
	h.Write(blobHeader(len(data)))
	h.Write(data)
	var out [20]byte
	copy(out[:], h.Sum(nil))
	return out
}

// gitBlobSHA256 is a SHA-256 repository's object id of a blob with this content.
func gitBlobSHA256(data []byte) []byte {
	h := sha256.New()
	h.Write(blobHeader(len(data)))
	h.Write(data)
	return h.Sum(nil)
}

// blobHeader is what git hashes before a blob's n bytes.
func blobHeader(n int) []byte { return []byte("blob " + strconv.Itoa(n) + "\x00") }

// provenBlobID is gitBlobID(data, idLen) where the id alone may stand for
// the bytes: ok is false when the SHA-1 of data shows a collision attack,
// as git's own hashing (sha1dc) shows and refuses it, so that bytes made
// to share a blob id with a file are never taken for the file's.
func provenBlobID(data []byte, idLen int) (id string, ok bool) {
	if idLen == 64 {
		return gitBlobID(data, idLen), true
	}
	h := sha1cd.New().(sha1cd.CollisionResistantHash)
	h.Write(blobHeader(len(data)))
	h.Write(data)
	sum, collision := h.CollisionResistantSum(nil)
	return hex.EncodeToString(sum), !collision
}
