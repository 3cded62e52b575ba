// Package mtrace reads a glibc mtrace log as a stream of trace events, so
// that the reference model can check any C program's heap without the
// program writing a trace of its own.
//
// glibc writes such a log for a process when MALLOC_TRACE names a file,
// libc_malloc_debug.so.0 is preloaded, and something calls mtrace(3). Each
// line is one heap call, optionally prefixed by the caller:
//
//	= Start
//	@ ./prog:(main+0x1d)[0x401136] + 0x4052a0 0x20
//	@ ./prog:(main+0x2b)[0x401144] < 0x4052a0
//	@ ./prog:(main+0x2b)[0x401144] > 0x4056d0 0x40
//	@ ./prog:(main+0x3a)[0x401153] - 0x4056d0
//
// The lines map onto layer-1 events one to one, as glibc's own mtrace script
// reads them:
//
//   - "+ addr size" is a malloc (of any of the allocating calls);
//   - "- addr" is a free;
//   - "< addr" and "> addr size" are the two halves of a realloc that moved
//     a block: a free and a malloc, each taken on its own;
//   - "!" (a failed realloc) and "+ (nil) size" (a failed allocation) change
//     nothing and yield no event;
//   - "= Start" and "= End" yield no event;
//   - the text after "@" becomes the event's Site, as written;
//   - the end of the log is the trace's end event: glibc logs until the
//     process exits, usually without an "= End".
//
// Addresses are "0x" and hex digits, or "(nil)" for NULL; sizes are hex with
// or without "0x" (glibc writes a zero size as "0"). Blank lines are skipped.
// Any other line is an input error (*traces.Error) naming its line; the
// message quotes at most a few dozen bytes of it. So is a log with no line
// but blank ones (glibc writes "= Start" when tracing begins: an empty log
// means the program was not traced), and a log that starts with a UTF-8
// byte-order mark, which glibc never writes.
//
// Sniff tells a log from a tlcheck trace by its first bytes. Symbols turns
// callers in a program built with -g into "file:line", as glibc's script
// does when given the program.
//
// Events are numbered in the order they are yielded, and Pos.Line is the
// log line each came from; the final end event, which no line wrote, has
// Line 0. The header says Effects false and Source "glibc mtrace".
//
// A multi-threaded program can log a free before the malloc it undoes. The
// reader yields the lines as they are; judging them is the model's job, and
// it reports such lines as violations, never as unreadable input.
//
// The reader streams: it allocates nothing per line in the steady state and
// holds a read buffer (64 KiB, or twice the longest line) and a bounded
// cache of caller strings.
package mtrace
