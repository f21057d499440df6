//go:build !unix

package fsutil

func readNoFollow(path string) ([]byte, error) { return readNoFollowFile(path) }
