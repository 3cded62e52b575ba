//go:build naiveindex

package index

// Index is the index the model uses: Naive, since the model was built with
// the tag naiveindex (without it, Tuned).
type Index[T any, P Thing[T]] = Naive[T, P]

// New returns an empty Index.
func New[T any, P Thing[T]](cfg Config[T]) *Index[T, P] { return NewNaive[T, P](cfg) }
