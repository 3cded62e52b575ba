package impldriver_test

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/drive/impldriver"
	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/autograd"
)

// The issue's program, whose view's gradient flows through its base's
// in-place op, served on the Go engine in PyTorch's lifetime: each answer
// as drive reads it (events left out), as PyTorch answers it too.
func ExampleServeAutograd() {
	program := `{"id":1,"op":"reset"}
{"id":2,"op":"leaf","handle":1,"shape":[3],"values":[1,2,3],"requires_grad":true}
{"id":3,"op":"mul","handle":2,"a":1,"b":1}
{"id":4,"op":"slice","handle":3,"a":2,"start":0,"stop":2}
{"id":5,"op":"mul_","target":2,"scalar":3}
{"id":6,"op":"sum","handle":4,"a":3}
{"id":7,"op":"backward","target":4,"retain_graph":false}
{"id":8,"op":"end"}
`
	r, w := io.Pipe()
	go func() {
		w.CloseWithError(impldriver.ServeAutograd(strings.NewReader(program), w, impl.Config{},
			autograd.Config{Lifetime: autograd.LifetimePyTorch}))
	}()
	sc := bufio.NewScanner(r)
	sc.Scan() // the hello
	for sc.Scan() {
		a, err := drive.ParseAnswer(sc.Bytes())
		if err != nil {
			fmt.Println(err)
			return
		}
		switch {
		case a.Refused:
			fmt.Println(a.ID, "refused:", a.Message)
		case a.Tensor != nil:
			fmt.Println(a.ID, a.Tensor.Shape, a.Tensor.Values, a.Tensor.GradFn, "version", a.Tensor.Version)
		case a.Grads != nil:
			fmt.Println(a.ID, "grads", a.Grads)
		}
	}
	// Output:
	// 2 [3] [1 2 3]  version 0
	// 3 [3] [1 4 9] MulBackward0 version 0
	// 4 [2] [1 4] SliceBackward0 version 0
	// 5 [3] [3 12 27] MulBackward0 version 1
	// 6 [] [15] SumBackward0 version 0
	// 7 grads [{1 [6 12 0]}]
}
