// Package plural writes counts of things in English: "1 byte", "0 bytes",
// "3 new findings". It is the one home of the counting words that the
// verdict (package check) and its reports (package report) write.
package plural

import "strconv"

// Count writes "n nouns", the noun as given for exactly one and with an
// "s" otherwise. It takes any integer, so that byte totals, which are
// uint64, are written whole: a leak of 2^64-1 bytes is not "-1 bytes".
func Count[N ~int | ~uint64](n N, noun string) string {
	var s string
	if n < 0 {
		s = strconv.FormatInt(int64(n), 10)
	} else {
		s = strconv.FormatUint(uint64(n), 10)
	}
	if n == 1 {
		return s + " " + noun
	}
	return s + " " + noun + "s"
}

// Rate writes "r nouns/s", r rounded to a whole number, the noun as given
// where that number is 1: "1 program/s", "0 programs/s", "6350 programs/s".
func Rate(r float64, noun string) string {
	s := strconv.FormatFloat(r, 'f', 0, 64)
	if s == "1" {
		return s + " " + noun + "/s"
	}
	return s + " " + noun + "s/s"
}
