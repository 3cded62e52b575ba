package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// jsonError turns an error of encoding/json, met decoding data, into one
// that says where and what in the file's own terms: a line and column,
// the field by its path, a byte that is not text as \xef (never as the
// Latin-1 letter 'ï' json's message shows), and what was wanted. The raw
// messages ("EOF", "json: cannot unmarshal number -5 into Go struct
// field BaselineTrace.traces.leaked_bytes of type uint64") name Go's
// types, not the file.
func jsonError(err error, data []byte) error {
	var (
		syn  *json.SyntaxError
		typ  *json.UnmarshalTypeError
		text = bytes.TrimLeft(data, " \t\r\n")
	)
	switch {
	case bytes.HasPrefix(data, []byte("\xef\xbb\xbf")):
		return errors.New("the file starts with a UTF-8 byte-order mark (bytes EF BB BF), which JSON may not have: save it as UTF-8 without one")
	case len(text) == 0:
		return errors.New("the file is empty: no JSON value")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%s: the JSON ends before its value does (a truncated file?)", where(data, int64(len(data))))
	case errors.As(err, &syn):
		at := syn.Offset - 1 // the offset is just past the byte json choked on
		if at >= 0 && at < int64(len(data)) && data[at] >= 0x80 {
			return fmt.Errorf("%s: invalid JSON: byte 0x%02x, where JSON wants %s", where(data, at), data[at], wanted(syn.Error()))
		}
		return fmt.Errorf("%s: invalid JSON: %s", where(data, max(at, 0)), strings.TrimPrefix(syn.Error(), "json: "))
	case errors.As(err, &typ):
		field := ""
		if typ.Field != "" {
			field = "field " + typ.Field + ": "
		}
		return fmt.Errorf("%s: %sgot %s, want %s", where(data, typ.Offset), field, typ.Value, typeWant(typ.Type))
	}
	if msg, ok := strings.CutPrefix(err.Error(), "json: "); ok {
		return errors.New(msg) // "unknown field "x"": the name says enough
	}
	return err
}

// wanted is what a json syntax message says was looked for: "looking for
// beginning of value" gives "the beginning of a value".
func wanted(msg string) string {
	if _, w, ok := strings.Cut(msg, " looking for "); ok {
		return "the " + w
	}
	if _, w, ok := strings.Cut(msg, " after "); ok {
		return "what may come after " + w
	}
	return "a JSON value"
}

// where is the line and column of a byte offset in data, both from 1.
func where(data []byte, off int64) string {
	off = min(off, int64(len(data)))
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - int64(bytes.LastIndexByte(data[:off], '\n'))
	return fmt.Sprintf("line %d, column %d", line, col)
}

// typeWant names what a Go type of a file's field accepts.
func typeWant(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf("a whole number from 0 to %d", uint64(1)<<(t.Bits())-1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return fmt.Sprintf("a whole number from %d to %d", -(int64(1) << (t.Bits() - 1)), int64(1)<<(t.Bits()-1)-1)
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return t.String()
}
