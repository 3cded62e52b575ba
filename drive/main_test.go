package drive_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/drive/impldriver"
	"github.com/tlcheck/tlcheck/impl"
)

// The test binary is its own drivers: run with TLCHECK_TEST_DRIVER set, it
// serves the protocol (or breaks it) instead of running tests, so that the
// tests start drivers without building anything.
const driverEnv = "TLCHECK_TEST_DRIVER"

// hangTimeout is the call timeout of tests that do not test timeouts: long,
// so that a loaded machine never passes for a hung driver.
const hangTimeout = 30 * time.Second

// buildDir holds what the tests build (the C driver), for the process.
var buildDir string

func TestMain(m *testing.M) {
	if kind := os.Getenv(driverEnv); kind != "" {
		os.Exit(serveAs(kind))
	}
	dir, err := os.MkdirTemp("", "tlcheck-drive-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	buildDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testDriver returns a Config that starts this test binary as driver kind.
func testDriver(kind string, timeout time.Duration) drive.Config {
	return drive.Config{
		Command:     []string{os.Args[0]},
		Env:         append(os.Environ(), driverEnv+"="+kind),
		CallTimeout: timeout,
	}
}

// serveAs runs driver kind: "impl" or "impl:FAULT" is impldriver over the
// Go runtime; the others are bad drivers, each breaking the protocol one
// way, after a correct hello.
func serveAs(kind string) int {
	name, fault, _ := strings.Cut(kind, ":")
	in, out := bufio.NewReader(os.Stdin), os.Stdout
	hello := fmt.Sprintf(`{"protocol":%q,"version":1,"layers":[2],"source":"bad driver %s"}`+"\n", drive.ProtocolName, name)
	switch name {
	case "impl":
		fmt.Fprintln(os.Stderr, "impldriver: serving") // every finding shows the driver's stderr
		var cfg impl.Config
		if fault != "" {
			cfg.Faults = []impl.Fault{impl.Fault(fault)}
		}
		if err := impldriver.Serve(in, out, cfg); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	case "crash-on": // impldriver, which dies when a call of op fault comes
		needle := []byte(`"op":"` + fault + `"`)
		if err := impldriver.Serve(crashOn{in, needle}, out, impl.Config{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	case "garbage": // a hello, then a line that is not JSON for every call
		fmt.Fprint(out, hello)
		for {
			if _, err := in.ReadString('\n'); err != nil {
				return 0
			}
			fmt.Fprintln(out, "Segmentation fault? no: just garbage")
		}
	case "exit": // answers the reset, then exits mid-program
		fmt.Fprint(out, hello)
		line, _ := in.ReadString('\n')
		var id int
		fmt.Sscanf(line, `{"id":%d`, &id)
		fmt.Fprintf(out, `{"id":%d,"events":[],"outcome":"done"}`+"\n", id)
		fmt.Fprintln(os.Stderr, "driver: about to die in the middle of a program")
		return 3
	case "sleep": // a hello, then nothing, for ever
		fmt.Fprint(out, hello)
		time.Sleep(time.Hour)
		return 0
	case "wrong-id": // answers the reset with an id it was not given
		fmt.Fprint(out, hello)
		line, _ := in.ReadString('\n')
		var id int
		fmt.Sscanf(line, `{"id":%d`, &id)
		fmt.Fprintf(out, `{"id":%d,"events":[],"outcome":"done"}`+"\n", id+7)
		time.Sleep(time.Hour)
		return 0
	case "stderr": // on the reset, writes GiB to stderr, then exits
		fmt.Fprint(out, hello)
		in.ReadString('\n')
		n := 1 << 30
		if fault != "" {
			fmt.Sscan(fault, &n)
		}
		chunk := []byte(strings.Repeat("noise on stderr\n", 4096))
		for w := 0; w < n; w += len(chunk) {
			if _, err := os.Stderr.Write(chunk); err != nil {
				return 1
			}
		}
		fmt.Fprintln(os.Stderr, "the last words of the flood")
		return 1
	case "long-line": // answers the reset with a line of 4 MiB
		fmt.Fprint(out, hello)
		in.ReadString('\n')
		out.Write(bytes.Repeat([]byte("x"), 4<<20))
		fmt.Fprintln(out)
		time.Sleep(time.Hour)
		return 0
	case "nondet", "nondet-restart": // answers that depend on earlier programs (nondet_test.go)
		return serveNondet(fault, name == "nondet-restart")
	case "no-hello":
		fmt.Fprintln(out, `{"protocol":"something-else","version":1}`)
		time.Sleep(time.Hour)
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown test driver", kind)
	return 2
}

// crashOn is stdin for a driver that dies (exit 3) when input holding
// needle arrives: a crash in the middle of a program.
type crashOn struct {
	r      io.Reader
	needle []byte
}

func (c crashOn) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if bytes.Contains(p[:n], c.needle) {
		fmt.Fprintf(os.Stderr, "driver: crashing on %s\n", c.needle)
		os.Exit(3)
	}
	return n, err
}
