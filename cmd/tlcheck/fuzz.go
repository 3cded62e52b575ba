package main

// runFuzz is a placeholder; its owner replaces this file.
func runFuzz(e *env, args []string) int { panic("unimplemented") }
