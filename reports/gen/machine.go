package main

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// machine describes where the figures were measured.
type machine struct {
	CPU, Cores, Memory, Kernel, Go, Glibc, Perl string
	Load                                        string // other work on the machine skews timings
}

func describeMachine() machine {
	m := machine{
		CPU:    procField("/proc/cpuinfo", "model name"),
		Cores:  itoa(runtime.NumCPU()),
		Memory: procField("/proc/meminfo", "MemTotal"),
		Kernel: firstLine("uname", "-sr"),
		Go:     runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH,
		Glibc:  firstLine("ldd", "--version"),
		Perl:   firstLine("perl", "-e", `print "perl $^V"`),
		Load:   loadAverage(),
	}
	return m
}

// procField returns the value of the first "key: value" line of a /proc file.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// firstLine returns the first line a command prints, or "unknown".
func firstLine(name string, args ...string) string {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return "unknown"
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(line)
}

// loadAverage returns the 1, 5 and 15 minute load averages.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], ", ")
}
