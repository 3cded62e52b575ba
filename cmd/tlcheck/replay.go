package main

// runReplay is a placeholder; its owner replaces this file.
func runReplay(e *env, args []string) int { panic("unimplemented") }
