package audit

import (
	"crypto/sha1"
	"crypto/sha256"
	"strconv"
)

// sha1Blob is git's object id of a blob with this content.
func sha1Blob(data []byte) [20]byte {
	h := sha1.New()
	h.Write([]byte("blob " + strconv.Itoa(len(data)) + "\x00"))
	h.Write(data)
	var out [20]byte
	copy(out[:], h.Sum(nil))
	return out
}

// gitBlobSHA256 is a SHA-256 repository's object id of a blob with this content.
func gitBlobSHA256(data []byte) []byte {
	h := sha256.New()
	h.Write([]byte("blob " + strconv.Itoa(len(data)) + "\x00"))
	h.Write(data)
	return h.Sum(nil)
}
