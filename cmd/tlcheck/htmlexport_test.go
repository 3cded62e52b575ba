package main

import (
	"github.com/tlcheck/tlcheck/internal/tracetest"
)

// What the HTML page shows is export's to test (export/html_test.go);
// the command's tests use these traces too (the page in Chromium, the
// profile's totals, a writer that fails).

const hostileSite = tracetest.HostileSite

var hostileTrace = tracetest.HostileTrace

var manyDoubleFrees = tracetest.ManyDoubleFrees
