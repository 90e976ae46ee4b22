//go:build !unix

package workspace

import (
	"io"
	"os"
)

// fileID tells a file apart from every other; without unix's device and
// inode numbers, no file is known to be linked twice.
type fileID struct{}

func linkedFile(os.FileInfo) (fileID, bool) { return fileID{}, false }

// copyData copies src to dst whole.
func copyData(dst, src *os.File, _ int64) error {
	_, err := io.Copy(dst, src)
	return err
}
