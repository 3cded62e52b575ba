module github.com/tlcheck/tlcheck

go 1.26
