package drive_test

import (
	"fmt"
	"math"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/traces"
)

// A driver written in Go reads each layer-5 call and writes its answer:
// here a leaf made, recorded as a storage (an object held by its tensors)
// that requires grad, with the tensor it is. Non-finite numbers travel as
// strings.
func ExampleParseTensorCall() {
	c, id, _, err := drive.ParseTensorCall([]byte(`{"id":7,"op":"leaf","handle":1,"shape":[2],"values":[1,"inf"],"requires_grad":true}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s of shape %v: %v\n", c.Op, c.Shape, c.Values)
	a := drive.Answer{ID: id,
		Events: []traces.Event{
			{Op: traces.OpAlloc, Addr: 0x10000, Size: 16},
			{Op: traces.OpUnregister, Addr: 0x10000},
			{Op: traces.OpLeafGrad, Addr: 0x10000},
		},
		Tensor: &drive.TensorState{Shape: c.Shape, Values: []float64{1, math.Inf(1)}, RequiresGrad: true, IsLeaf: true},
	}
	fmt.Printf("%s\n", a.AppendJSON(nil))
	// Output:
	// leaf of shape [2]: [1 +Inf]
	// {"id":7,"events":[{"op":"alloc","addr":"0x10000","size":16},{"op":"unregister","addr":"0x10000"},{"op":"leaf_grad","addr":"0x10000"}],"outcome":"done","tensor":{"shape":[2],"values":[1,"inf"],"requires_grad":true,"is_leaf":true,"grad_fn":null,"version":0}}
}
