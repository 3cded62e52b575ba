package traces

// State is the observable state of a managed-object runtime (layer 2) at one
// moment, in terms that both a runtime keyed by address and a model keyed by
// identity can give: at any moment a live object is known by its address.
// Property tests compare the two sides' States after every step.
type State struct {
	Objects map[Addr]int    // live object -> reference count
	Scopes  [][]Addr        // open scopes, bottom first; each scope's records of live objects, oldest first
	Params  map[string]Addr // parameter name -> object
}
