package rpc

import (
	"bufio"
	"bytes"
	"io"
)

// lineReader reads lines of at most max bytes, not counting the line
// ending ("\n" or "\r\n"). It holds at most max+2 bytes of a line: the
// rest of a longer one is read and dropped.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its ending, or tooLong (and no line)
// when it is longer than max. err is io.EOF with the input's last line
// (possibly empty) when the input ends; the line before any other read
// error is dropped.
func (lr *lineReader) next() (line []byte, tooLong bool, err error) {
	lr.buf = lr.buf[:0]
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if !tooLong {
			if len(lr.buf)+len(chunk) > lr.max+2 {
				tooLong, lr.buf = true, lr.buf[:0]
			} else {
				lr.buf = append(lr.buf, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		line = bytes.TrimSuffix(lr.buf, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		if tooLong || len(line) > lr.max {
			return nil, true, err
		}
		return line, false, err
	}
}
