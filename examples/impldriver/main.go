// Command impldriver serves the tlcheck-drive protocol (drive/PROTOCOL.md)
// for the Go runtime of package impl: the protocol's reference driver in
// Go, beside examples/cruntime's in C. With -autograd it serves layer-5
// programs instead, on the autograd engine of package impl/autograd, in
// PyTorch's lifetime (-lifetime tensorlogic: TensorLogic's hybrid
// cleanup).
//
//	go build -o /tmp/impldriver ./examples/impldriver
//	tlcheck fuzz --exec /tmp/impldriver
//	tlcheck fuzz --exec '/tmp/impldriver -fault stale-record-not-purged'
//	tlcheck fuzz --exec '/tmp/impldriver -autograd' --against 'python3 examples/torchdriver/driver.py'
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/tlcheck/tlcheck/drive/impldriver"
	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/autograd"
)

func main() {
	var faults []impl.Fault
	flag.Func("fault", "switch on a fault of the catalog (repeatable)", func(s string) error {
		faults = append(faults, impl.Fault(s))
		return nil
	})
	grad := flag.Bool("autograd", false, "serve layer-5 (autograd) programs on impl/autograd")
	lifetime := flag.String("lifetime", "pytorch", "with -autograd: the engine's lifetime, pytorch or tensorlogic")
	flag.Parse()
	acfg := autograd.Config{Lifetime: autograd.LifetimePyTorch}
	switch *lifetime {
	case "pytorch":
	case "tensorlogic":
		acfg.Lifetime = autograd.LifetimeTensorLogic
	default:
		fmt.Fprintf(os.Stderr, "impldriver: -lifetime %q: want pytorch or tensorlogic\n", *lifetime)
		os.Exit(2)
	}
	cfg := impl.Config{Faults: faults}
	var err error
	if *grad {
		err = impldriver.ServeAutograd(os.Stdin, os.Stdout, cfg, acfg)
	} else {
		err = impldriver.Serve(os.Stdin, os.Stdout, cfg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "impldriver:", err)
		os.Exit(1)
	}
}
