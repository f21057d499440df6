// Package fsutil writes files atomically and never through a symlink or
// onto a non-regular file, and reads configuration files with bounds.
package fsutil

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// WriteFile writes data to a temporary file beside path and renames it into
// place, so a reader never sees a half-written file and a failure leaves the
// old file untouched. path must be absent, a regular file or a symlink (the
// link is replaced, never written through); a device, a FIFO, a socket or a
// directory is refused.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	var b Batch
	b.Add(path, data, perm)
	return b.Commit(context.Background())
}

// Batch writes several files as one unit: every file is written to a
// temporary file first, and only when all are written and synced are they
// renamed into place, in the order added. A failure or a cancelled context
// before the renames leaves every target untouched and removes the
// temporary files. Readers that must not pair files of two runs check
// what names what (a record names its pack's digest): the renames are
// consecutive, not simultaneous.
type Batch struct {
	files []batchFile
}

type batchFile struct {
	path string
	data []byte
	perm os.FileMode
	// prepared, when set, is the file's temporary file, written ahead.
	prepared *Prepared
}

// Add queues a file.
func (b *Batch) Add(path string, data []byte, perm os.FileMode) {
	b.files = append(b.files, batchFile{path: path, data: data, perm: perm})
}

// AddPrepared queues a file whose temporary file Prepare is writing: the
// batch waits for it, and renames it into place in its turn.
func (b *Batch) AddPrepared(p *Prepared) {
	b.files = append(b.files, batchFile{path: p.path, prepared: p})
}

// Prepared is a file of a batch written ahead (Prepare): its temporary
// file is written and synced while the caller goes on (a large pack's
// ~20 ms, most of it waiting for the disk, beside its audit), and renamed
// into place only by a batch that commits it (Batch.AddPrepared).
type Prepared struct {
	path string
	done chan struct{}
	tmp  string // set when done
	err  error  // set when done

	mu      sync.Mutex
	settled bool // renamed into place by a batch, or removed
}

// Prepare starts writing data to a temporary file beside path, as a batch
// writes it (created exclusively, synced, perm set). Hand it to a batch
// with AddPrepared, or Discard it.
func Prepare(path string, data []byte, perm os.FileMode) *Prepared {
	p := &Prepared{path: path, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		if p.err = checkTarget(path); p.err != nil {
			return // nothing is written beside a device or a directory
		}
		removeStaleTemps(path)
		p.tmp, p.err = writeTemp(path, data, perm)
	}()
	return p
}

// wait waits for the write and returns its temporary file and error.
func (p *Prepared) wait() (string, error) {
	<-p.done
	return p.tmp, p.err
}

// Discard waits for the write and removes its temporary file, unless a
// batch renamed it into place. It may be called more than once.
func (p *Prepared) Discard() {
	tmp, _ := p.wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.settled && tmp != "" {
		os.Remove(tmp)
	}
	p.settled = true
}

// keep marks the temporary file renamed into place.
func (p *Prepared) keep() {
	p.mu.Lock()
	p.settled = true
	p.mu.Unlock()
}

// tempMarker is in every temporary file's name, followed by the writing
// process id, so a later run can remove what a killed one left.
const tempMarker = ".ctxpack-tmp-"

// Commit writes the batch. See Batch.
func (b *Batch) Commit(ctx context.Context) (err error) {
	var temps []string
	defer func() {
		if err != nil {
			for _, t := range temps {
				os.Remove(t)
			}
			for _, f := range b.files {
				if f.prepared != nil {
					f.prepared.Discard()
				}
			}
		}
	}()
	for _, f := range b.files {
		if err := checkTarget(f.path); err != nil {
			return err
		}
	}
	for _, f := range b.files {
		if f.prepared != nil {
			tmp, err := f.prepared.wait()
			if err != nil {
				return err
			}
			temps = append(temps, tmp)
			continue
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("write %s: %w", f.path, err)
		}
		removeStaleTemps(f.path)
		tmp, err := writeTemp(f.path, f.data, f.perm)
		if tmp != "" {
			temps = append(temps, tmp)
		}
		if err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("write %s: %w", b.files[0].path, err)
	}
	for i, f := range b.files {
		if err := os.Rename(temps[i], f.path); err != nil {
			for _, t := range temps[i:] {
				os.Remove(t)
			}
			temps = nil
			return fmt.Errorf("write %s: %w", f.path, err)
		}
		if f.prepared != nil {
			f.prepared.keep()
		}
	}
	syncDirs(b.files)
	return nil
}

// checkTarget refuses to replace anything but a regular file or a symlink.
func checkTarget(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if m := fi.Mode(); !m.IsRegular() && m&fs.ModeSymlink == 0 {
		return fmt.Errorf("write %s: it is %s, not a regular file: ctxpack writes only regular files (choose another path)", path, kindOf(m))
	}
	return nil
}

// writeTemp writes data to a new temporary file beside path (created
// exclusively: it never follows or reuses an existing name) and syncs it.
func writeTemp(path string, data []byte, perm os.FileMode) (string, error) {
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	name := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+tempMarker+strconv.Itoa(os.Getpid())+"-"+hex.EncodeToString(rnd[:]))
	tmp, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
	if err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	fail := func(err error) (string, error) {
		tmp.Close()
		return name, fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Chmod(perm); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return name, fmt.Errorf("write %s: %w", path, err)
	}
	return name, nil
}

// removeStaleTemps removes the temporary files of path that a process which
// no longer runs left behind (it was killed between writing and renaming).
func removeStaleTemps(path string) {
	dir, base := filepath.Dir(path), "."+filepath.Base(path)+tempMarker
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), base)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		os.Remove(filepath.Join(dir, e.Name()))
	}
}

// syncDirs makes the renames durable (best effort: not every file system
// syncs a directory).
func syncDirs(files []batchFile) {
	seen := map[string]bool{}
	for _, f := range files {
		d := filepath.Dir(f.path)
		if seen[d] {
			continue
		}
		seen[d] = true
		if df, err := os.Open(d); err == nil {
			_ = df.Sync()
			df.Close()
		}
	}
}

// kindOf names a non-regular file mode for messages.
func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	default:
		return "not a regular file"
	}
}

// FreshDir makes path a new, empty directory that this process created:
// whatever was there (a symlink, which is removed and never followed, a
// file, or a directory with its contents) is removed first. Use it for an
// output directory inside a checkout, which the repository could have
// committed as a symlink.
func FreshDir(path string, perm os.FileMode) error {
	if err := os.RemoveAll(path); err != nil {
		return fmt.Errorf("clear %s: %w", path, err)
	}
	if err := os.Mkdir(path, perm); err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("create %s: it was replaced while it was created", path)
	}
	return nil
}
