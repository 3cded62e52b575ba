package main

import (
	"flag"

	"github.com/tlcheck/tlcheck/drive"
)

// misuseFlag reads --misuse: given, it decides; left out, the driver's
// hello does.
func misuseFlag(fs *flag.FlagSet, on bool) drive.Misuse {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "misuse" })
	switch {
	case !set:
		return drive.MisuseAsHello
	case on:
		return drive.MisuseOn
	}
	return drive.MisuseOff
}
