//go:build !naiveindex

package index

// Index is the index the model uses: Tuned (build with the tag naiveindex
// for Naive).
type Index[T any, P Thing[T]] = Tuned[T, P]

// New returns an empty Index.
func New[T any, P Thing[T]](cfg Config[T]) *Index[T, P] { return NewTuned[T, P](cfg) }
