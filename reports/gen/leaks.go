package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tlcheck/tlcheck/traces"
)

// block is one entry of a leak list.
type block struct {
	Addr uint64
	Size uint64
}

// leakCompare is how the two leak lists compared.
type leakCompare struct {
	Script, Tlcheck           int    // blocks listed
	ScriptBytes, TlcheckBytes uint64 // their bytes
	Equal                     bool   // equal as multisets of (address, size)
	Diff                      []string
}

// compareLeaks reads the leak table glibc's script printed and the leaks of
// tlcheck's JSON report (sized by the log line each names as where the
// block was allocated) and compares them. It also returns the events
// tlcheck counted.
func compareLeaks(log, scriptOut, tlcheckOut string) (leakCompare, int, error) {
	var c leakCompare
	script, err := scriptLeaks(scriptOut)
	if err != nil {
		return c, 0, err
	}
	data, err := os.ReadFile(tlcheckOut)
	if err != nil {
		return c, 0, err
	}
	var rep traces.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		return c, 0, fmt.Errorf("tlcheck's JSON report: %w", err)
	}
	at := make(map[int]traces.Addr) // log line -> leaked address
	for _, v := range rep.Violations {
		if v.Kind != traces.Leak {
			continue
		}
		i := slices.IndexFunc(v.Related, func(r traces.Related) bool { return r.What == "allocated" })
		if i < 0 || v.Related[i].Line == 0 {
			return c, 0, fmt.Errorf("leak at %s names no allocating line", v.Addr)
		}
		at[v.Related[i].Line] = v.Addr
	}
	mine, err := blocksAt(log, at)
	if err != nil {
		return c, 0, err
	}
	c.Script, c.Tlcheck = len(script), len(mine)
	for _, b := range script {
		c.ScriptBytes += b.Size
	}
	for _, b := range mine {
		c.TlcheckBytes += b.Size
	}
	c.Diff = diffBlocks(script, mine)
	c.Equal = len(c.Diff) == 0 && c.TlcheckBytes == rep.Leaked.Bytes && c.Tlcheck == rep.Leaked.Objects
	return c, rep.Events, nil
}

// scriptLeaks parses the "Memory not freed" table of glibc's script.
func scriptLeaks(path string) ([]block, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	row := regexp.MustCompile(`^(0x[0-9a-f]+) +(0x[0-9a-f]+|0)  at `)
	var leaks []block
	for line := range strings.SplitSeq(string(data), "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			addr, _ := strconv.ParseUint(m[1], 0, 64)
			size, _ := strconv.ParseUint(m[2], 0, 64)
			leaks = append(leaks, block{addr, size})
		}
	}
	return leaks, nil
}

// blocksAt reads the allocating lines of log named in at and returns the
// blocks they made, checking each address against the leak that named it.
func blocksAt(log string, at map[int]traces.Addr) ([]block, error) {
	f, err := os.Open(log)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var blocks []block
	for n := 1; sc.Scan(); n++ {
		want, ok := at[n]
		if !ok {
			continue
		}
		fields := strings.Fields(sc.Text())
		if len(fields) > 0 && fields[0] == "@" {
			fields = fields[2:]
		}
		if len(fields) != 3 || (fields[0] != "+" && fields[0] != ">") {
			return nil, fmt.Errorf("log line %d allocates nothing: %q", n, sc.Text())
		}
		addr, err1 := strconv.ParseUint(fields[1], 0, 64)
		size, err2 := strconv.ParseUint(strings.TrimPrefix(fields[2], "0x"), 16, 64)
		if err1 != nil || err2 != nil || traces.Addr(addr) != want {
			return nil, fmt.Errorf("log line %d does not allocate %s: %q", n, want, sc.Text())
		}
		blocks = append(blocks, block{addr, size})
	}
	return blocks, sc.Err()
}

// diffBlocks returns the blocks listed by one side only (at most 10).
func diffBlocks(script, mine []block) []string {
	count := make(map[block]int)
	for _, b := range script {
		count[b]++
	}
	for _, b := range mine {
		count[b]--
	}
	var diff []string
	for b, n := range count {
		switch {
		case n > 0:
			diff = append(diff, fmt.Sprintf("only glibc's script: %#x size %#x (x%d)", b.Addr, b.Size, n))
		case n < 0:
			diff = append(diff, fmt.Sprintf("only tlcheck: %#x size %#x (x%d)", b.Addr, b.Size, -n))
		}
	}
	slices.Sort(diff)
	return diff[:min(len(diff), 10)]
}
