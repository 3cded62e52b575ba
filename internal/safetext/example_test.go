package safetext_test

import (
	"fmt"

	"github.com/tlcheck/tlcheck/internal/safetext"
)

// A site that would clear the screen and set the window title shows as
// text; an ordinary one is left as written.
func ExampleEscape() {
	fmt.Println(safetext.Escape("\x1b[2J\x1b]0;pwned\a"))
	fmt.Println(safetext.Escape("model.go:12"))
	// Output:
	// \x1b[2J\x1b]0;pwned\a
	// model.go:12
}
