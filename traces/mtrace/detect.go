package mtrace

import "bytes"

// bom is the UTF-8 byte-order mark: glibc never writes one, so a log that
// starts with it was saved again by an editor.
const bom = "\xef\xbb\xbf"

// Sniff reports whether an input that begins with prefix is an mtrace log
// rather than a tlcheck trace: its first line that is not blank starts with
// a field that only an mtrace line starts with ("=", "@", "+", "-", "<",
// ">" or "!", followed by a blank or the end of the line), where a trace
// starts with "{". A byte-order mark before it is passed over, so that the
// reader that then names the mark is the log's. The first few hundred bytes
// of an input are prefix enough.
func Sniff(prefix []byte) bool {
	b := bytes.TrimPrefix(prefix, []byte(bom))
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:] // blank lines, and blanks before the first field
	}
	if len(b) == 0 {
		return false // nothing to go by: an empty input is neither
	}
	switch b[0] {
	case '=', '@', '+', '-', '<', '>', '!':
		return len(b) == 1 || isSpace(b[1])
	}
	return false
}
