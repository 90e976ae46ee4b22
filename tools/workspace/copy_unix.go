//go:build unix

package workspace

import (
	"errors"
	"io"
	"os"
	"syscall"
)

// fileID tells a file apart from every other on the machine.
type fileID struct{ dev, ino uint64 }

// linkedFile is the id of the file info describes when it has more than
// one link.
func linkedFile(info os.FileInfo) (fileID, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || st.Nlink < 2 {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), uint64(st.Ino)}, true
}

// Whence values of lseek(2) that find a file's data and holes.
const (
	seekData = 3
	seekHole = 4
)

// copyData copies the size bytes of src to dst, both at offset 0,
// writing only src's data: its holes stay holes in dst. A file system
// that cannot tell its holes (lseek refuses SEEK_DATA) is copied whole.
func copyData(dst, src *os.File, size int64) error {
	for off := int64(0); off < size; {
		data, err := src.Seek(off, seekData)
		if errors.Is(err, syscall.ENXIO) { // nothing but a hole to the end
			break
		}
		if err != nil {
			if off > 0 {
				return err
			}
			_, err = io.Copy(dst, src)
			return err
		}
		hole, err := src.Seek(data, seekHole)
		if err != nil {
			return err
		}
		if _, err := src.Seek(data, io.SeekStart); err != nil {
			return err
		}
		if _, err := dst.Seek(data, io.SeekStart); err != nil {
			return err
		}
		if _, err := io.CopyN(dst, src, hole-data); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		off = hole
	}
	return dst.Truncate(size)
}
