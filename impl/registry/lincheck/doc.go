// Package lincheck checks that concurrent histories of an impl/registry
// Registry are linearizable: that every call took effect at one instant
// between its invocation and its return, in an order a sequential model of
// the registry accepts, outputs included. It runs a workload of random
// calls from several goroutines at once on a small set of addresses (so
// that they collide), records each call's input, output and interval, and
// hands the history to github.com/anishathalye/porcupine. The registry's
// recorder yields the processor under the shard lock it runs in, so that
// the other goroutines pile up in the windows between a call's locks,
// where the races are, and not only when the scheduler happens to
// preempt there.
//
// The model (Model) is the registry's contract stated sequentially: plain
// pointers, buffers whose count is the real pointer plus its aliases,
// errors for misuse, the block each unregister frees, and the queries. A
// history that no order of the calls explains is Illegal, and comes with
// porcupine's visualization (Result.Visualize), the longest partial
// linearizations a person can look at.
//
// A history in which no call returns for Config.Stall (5 s by default) is
// given up as deadlocked: Run returns ErrStalled with every goroutine's
// stack, within seconds, rather than wait forever.
//
// This is the engine that hunts the catalog's registry faults
// (impl.EngineRegistry): Hunt runs histories until one is not
// linearizable; tlcheck selftest reports it.
package lincheck
