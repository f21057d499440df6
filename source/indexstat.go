package source

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// indexStat is what the index recorded of a tracked file: the blob it was
// added as, and the stat git compares to take the file as that blob
// without reading it again (statClean).
type indexStat struct {
	id           ObjectID
	size         uint32
	mtime, ctime time.Time
	inode        uint32
}

// loadIndexStats reads the work tree's index entries a file may be taken
// as by its stat alone (statClean): regular files, stage 0, not skipped
// by a sparse checkout, not intended to be added, and written before the
// index was (an entry as new as the index is racily clean: its file may
// have changed in the same tick, and is hashed). A search that reads at
// least an eighth as many files as the index lists reads them (the index
// costs ~0.5 µs an entry, hugo's 2,547 in 1.3 ms, where hashing a file
// costs ~5 µs, hugo's 843 Go files ~6 ms of a range's CPU: a search that
// reads few is not worth reading a large index for), once, and every
// work-tree read takes them from then on (worktreeBlobBuf). None for a
// bare repository, a SHA-256 one (parseIndexStats reads SHA-1 entries)
// or an index that cannot be read: every file is then hashed.
func (r *Repo) loadIndexStats(reading int) {
	if r.bare || r.Root == "" || r.gitDir == "" || r.b == nil || r.b.objectFormat() != "sha1" || r.indexed.Load() != nil {
		return
	}
	r.indexedMu.Lock()
	defer r.indexedMu.Unlock()
	if r.indexed.Load() != nil {
		return
	}
	m, read := readIndexStats(filepath.Join(r.gitDir, "index"), 8*reading)
	if read {
		r.indexed.Store(&m) // empty where it could not be parsed: not read again
	}
}

// readIndexStats reads the index file name (see loadIndexStats) when it
// lists at most most entries; read is false when it was not read (too
// many entries, or no such file).
func readIndexStats(name string, most int) (m map[string]indexStat, read bool) {
	// Opened without blocking and then held to a regular file: a FIFO in
	// its place cannot hold the run.
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	// The index's time is taken before it is read, of the file read: a
	// file written in between has entries no older than this time, which
	// are then hashed.
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	// The header first: its entry count says whether to read the rest. A
	// file that changed size since its stat does not parse whole, and is
	// not taken.
	data := make([]byte, max(fi.Size(), 12))
	if _, err := io.ReadFull(f, data[:12]); err != nil || string(data[:4]) != "DIRC" {
		return nil, true
	}
	if int(binary.BigEndian.Uint32(data[8:])) > most {
		return nil, false
	}
	n, _ := io.ReadFull(f, data[12:])
	m, _ = parseIndexStats(data[:12+n], fi.ModTime())
	return m, true
}

// parseIndexStats reads the entries of a git index (versions 2 to 4, SHA-1
// ids; see git's Documentation/gitformat-index.txt) that loadIndexStats
// keeps, written is the index file's time. go-git's decoder reads each
// field through encoding/binary's reflection and checks the file's
// checksum through collision-detecting SHA-1: ~9 ms for hugo's 2,547
// entries, more than the ~6 ms of hashing the files it spares. The
// checksum is not checked: an entry is only ever taken for a file whose
// stat it matches, and what a pack sends of such a file the audit proves
// its blob by hashing it. Extensions (after the entries) are not read;
// a split index's entries in its shared file are not seen, and those
// files are hashed.
func parseIndexStats(data []byte, written time.Time) (map[string]indexStat, error) {
	if len(data) < 12 || string(data[:4]) != "DIRC" {
		return nil, errors.New("not a git index")
	}
	version := binary.BigEndian.Uint32(data[4:])
	if version < 2 || version > 4 {
		return nil, fmt.Errorf("index version %d", version)
	}
	count := int(binary.BigEndian.Uint32(data[8:]))
	const fixed = 62 // the stat, mode, sizes, id and flags before the name
	if count > (len(data)-12)/fixed {
		return nil, fmt.Errorf("index of %d entries in %d bytes", count, len(data))
	}
	out := make(map[string]indexStat, count)
	var name []byte // the last entry's, which a version 4 name starts from
	at := 12
	for range count {
		if len(data)-at < fixed {
			return nil, errors.New("index entry cut short")
		}
		e := data[at:]
		u32 := func(off int) uint32 { return binary.BigEndian.Uint32(e[off:]) }
		ctime := time.Unix(int64(u32(0)), int64(u32(4)))
		mtime := time.Unix(int64(u32(8)), int64(u32(12)))
		inode, mode, size := u32(20), u32(24), u32(36)
		oid := e[40:60]
		flags := binary.BigEndian.Uint16(e[60:])
		pos := fixed
		var extended uint16
		if flags&0x4000 != 0 {
			if version < 3 || len(e) < pos+2 {
				return nil, errors.New("index entry: extended flags out of place")
			}
			extended = binary.BigEndian.Uint16(e[pos:])
			pos += 2
		}
		if version == 4 {
			strip, n := indexVarint(e[pos:])
			if n <= 0 || strip > uint64(len(name)) {
				return nil, errors.New("index entry: bad name prefix")
			}
			pos += n
			end := bytes.IndexByte(e[pos:], 0)
			if end < 0 {
				return nil, errors.New("index entry: name not ended")
			}
			name = append(name[:len(name)-int(strip)], e[pos:pos+end]...)
			pos += end + 1
		} else {
			end := bytes.IndexByte(e[pos:], 0)
			if end < 0 {
				return nil, errors.New("index entry: name not ended")
			}
			name = append(name[:0], e[pos:pos+end]...)
			// NUL padding to a multiple of 8 bytes, at least one.
			pos = (pos + end + 8) &^ 7
			if pos > len(e) {
				return nil, errors.New("index entry: padding cut short")
			}
		}
		at += pos
		if len(name) == 0 {
			return nil, errors.New("index entry without a name")
		}
		stage := flags >> 12 & 3
		skipWorktree, intentToAdd := extended&0x4000 != 0, extended&0x2000 != 0
		regular := mode == 0o100644 || mode == 0o100755
		if stage != 0 || skipWorktree || intentToAdd || !regular || mtime.Unix() == 0 || !beforeIndex(mtime, written) {
			continue
		}
		out[string(name)] = indexStat{id: ObjectID(hex.EncodeToString(oid)), size: size, mtime: mtime, ctime: ctime, inode: inode}
	}
	return out, nil
}

// indexVarint decodes git's offset varint (varint.c) from b: the value
// and the bytes read, or n ≤ 0 where b ends first or the value overflows.
func indexVarint(b []byte) (v uint64, n int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	v = uint64(c & 127)
	n = 1
	for c&128 != 0 {
		if n >= len(b) || v+1 > math.MaxUint64>>7 {
			return 0, -1
		}
		v++
		c = b[n]
		n++
		v = v<<7 + uint64(c&127)
	}
	return v, n
}
