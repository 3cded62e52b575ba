#!/bin/bash -eu
# Builds tlcheck's native Go fuzz targets as libFuzzer binaries in $OUT, the
# way OSS-Fuzz and ClusterFuzzLite build Go: compile_native_go_fuzzer runs
# go-118-fuzz-build, which rewrites the target's file to use its own testing
# package and builds a c-archive with libFuzzer instrumentation, then links
# it with $CXX $CXXFLAGS $LIB_FUZZING_ENGINE. The builder image
# (base-builder-go) runs this as $SRC/build.sh in a throwaway copy of the
# repository; .clusterfuzzlite/test.sh runs it here with a stand-in for
# compile_native_go_fuzzer.
#
# What compile_native_go_fuzzer asks of a target, and the repository keeps:
#   - its file compiles alone with the package's non-test files (no helper
#     from another _test.go file) against go-118-fuzz-build's testing
#     package, which has T and F but no B;
#   - among the .go files of its package, only that file names the
#     function (the script greps the package folder for the name, and
#     the folders under it: two targets of one name in nested packages
#     clash, as FuzzReader of traces and of traces/torchsnap did);
#   - it is in the package itself, not an external _test package.
# TestClusterFuzzLiteBuildsEveryTarget (fuzz/) holds the repository to these.
set -euo pipefail

# go-118-fuzz-build imports its testing package into the rewritten target,
# so the module must require it. It is added here, in the builder's copy,
# so that the repository's go.mod holds nothing only this build needs.
# test.sh pins the version; the builder image builds the tool from the
# repository's head, which "latest" matches.
go get "github.com/AdamKorcz/go-118-fuzz-build/testing@${GO118_FUZZ_BUILD_VERSION:-latest}"

# build_target PACKAGE FUNCTION NAME builds one target as $OUT/NAME.
# Older compile_native_go_fuzzer scripts grep every file under the package
# folder, testdata and notes included, and break when the name is found in
# more than one: the seed listings under fuzz/testdata, fuzz/doc.go and
# fuzz/seeds_test.go name their targets. None of those is compiled into a
# libFuzzer build, so they are moved aside while the target builds (this
# is the builder's own copy) and put back for the next target.
build_target() {
	local pkg=$1 func=$2 name=$3 dir aside f rel
	dir=$(go list -f '{{.Dir}}' "$pkg")
	aside=$(mktemp -d)
	while IFS= read -r f; do
		rel=${f#"$dir"/}
		if grep -q "^func $func(" "$f"; then
			continue # the target's own file
		fi
		case $rel in
		*_test.go | doc.go | testdata/* | *.md) ;;
		*)
			echo "build.sh: $rel names $func but is compiled into the libFuzzer build; reword it" >&2
			return 1
			;;
		esac
		mkdir -p "$aside/$(dirname "$rel")"
		mv "$f" "$aside/$rel"
	done < <(grep -r -l -s -F "$func" "$dir")

	compile_native_go_fuzzer "$pkg" "$func" "$name"

	cp -a "$aside/." "$dir/"
	rm -rf "$aside"
}

m=github.com/tlcheck/tlcheck
build_target $m/fuzz FuzzReplay FuzzReplay
build_target $m/fuzz FuzzProgram FuzzProgram
build_target $m/fuzz FuzzSource FuzzSource
build_target $m/fuzz FuzzAutogradProgram FuzzAutogradProgram
build_target $m/fuzz FuzzPoolProgram FuzzPoolProgram
build_target $m/impl/lang FuzzParse FuzzParse
build_target $m/traces FuzzReader FuzzReader
build_target $m/traces/mtrace FuzzParseLine FuzzParseLine
build_target $m/traces/mtrace FuzzHexDigits FuzzHexDigits
build_target $m/traces/torchsnap FuzzSnapshot FuzzTorchSnapshot
build_target $m/traces/torchsnap FuzzPickle FuzzPickle
build_target $m/drive/drivetest FuzzCRuntime FuzzCRuntime
