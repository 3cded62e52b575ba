// Command impldriver serves the tlcheck-drive protocol (drive/PROTOCOL.md)
// for the Go runtime of package impl: the protocol's reference driver in
// Go, beside examples/cruntime's in C.
//
//	go build -o /tmp/impldriver ./examples/impldriver
//	tlcheck fuzz --exec /tmp/impldriver
//	tlcheck fuzz --exec '/tmp/impldriver -fault stale-record-not-purged'
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/tlcheck/tlcheck/drive/impldriver"
	"github.com/tlcheck/tlcheck/impl"
)

func main() {
	var faults []impl.Fault
	flag.Func("fault", "switch on a fault of the catalog (repeatable)", func(s string) error {
		faults = append(faults, impl.Fault(s))
		return nil
	})
	flag.Parse()
	if err := impldriver.Serve(os.Stdin, os.Stdout, impl.Config{Faults: faults}); err != nil {
		fmt.Fprintln(os.Stderr, "impldriver:", err)
		os.Exit(1)
	}
}
