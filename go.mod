module github.com/tlcheck/tlcheck

go 1.26.0

// Test and comparison machinery only; nothing here is on the replay path.
require (
	github.com/google/go-cmp v0.7.0 // readable diffs of runtime vs model state
	github.com/leanovate/gopter v0.2.11 // a second, independent property engine (commands)
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // offline JSON Schema 2020-12 checks of shipped traces
	pgregory.net/rapid v1.3.0 // state-machine property tests with shrinking
)

require github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b // reports/gen merges the profiles behind cmd/tlcheck/default.pgo; export --format pprof writes one

require github.com/kisielk/og-rek v1.3.0 // tests only: traces/torchsnap holds its pickle reader to og-rek (FuzzPickle)

require (
	github.com/chromedp/cdproto v0.159.0 // Chrome DevTools protocol types, for chromedp
	github.com/chromedp/chromedp v0.23.0 // tests only: loads the HTML export in a headless Chromium
)

require github.com/anishathalye/porcupine v1.3.1 // linearizability of impl/registry's concurrent histories (impl/registry/lincheck, tlcheck selftest): the standard checker for Go, with a visualization of a failure

require (
	github.com/aristanetworks/gomap v0.0.0-20230726210543-f4e41046dced // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	golang.org/x/exp v0.0.0-20230725093048-515e97ebf090 // indirect
	golang.org/x/text v0.14.0 // indirect
)
