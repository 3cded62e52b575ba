#!/usr/bin/env bash
# Builds every fuzz target as ClusterFuzzLite and OSS-Fuzz do, by running
# .clusterfuzzlite/build.sh on a copy of the working tree with a stand-in
# for the builder image's compile_native_go_fuzzer, then runs one target as
# a libFuzzer binary for a short time and prints its figures.
#
#   bash .clusterfuzzlite/test.sh [SECONDS [TARGET|all]]   # default: 20 FuzzReplay
#
# With all, every target build.sh built runs for SECONDS in turn (CI runs
# it so). Needs clang (Debian: apt-get install clang) and the Go module
# github.com/AdamKorcz/go-118-fuzz-build, from the module cache or the Go
# module proxy. Without either it says so and exits 0, or, with
# CFL_REQUIRED=1 (CI), fails. It is not part of go test ./...: a cold
# build takes minutes.
#
# go-118-fuzz-build rewrites source files in place and, when a build fails,
# leaves them rewritten; so everything happens in a temporary copy.
set -euo pipefail

seconds=${1:-20}
target=${2:-FuzzReplay}
root=$(cd "$(dirname "$0")/.." && pwd)

# The go-118-fuzz-build commit the tool and its testing package come from:
# one pinned version, so that both match and a run is repeatable.
version=v0.0.0-20250520111509-a70c2aa677fa
tool=github.com/AdamKorcz/go-118-fuzz-build

skip() {
	if [[ ${CFL_REQUIRED:-} == 1 ]]; then
		echo "FAIL: $* (CFL_REQUIRED=1)" >&2
		exit 1
	fi
	echo "skip: $*"
	exit 0
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/src/tlcheck" "$work/out" "$work/corpus"

# clang must link a libFuzzer binary, not only exist.
cxx=${CXX:-clang++}
command -v "$cxx" >/dev/null || skip "$cxx not found (Debian: apt-get install clang)"
printf 'extern "C" int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' >"$work/probe.cc"
"$cxx" -fsanitize=fuzzer "$work/probe.cc" -o "$work/probe" 2>"$work/probe.log" ||
	skip "$cxx cannot link with -fsanitize=fuzzer: $(tail -1 "$work/probe.log")"
echo "clang: $("$cxx" --version | head -1)"

# The tool, and its testing package in a scratch module: either fails only
# where the module cannot be had, and then the rest cannot run.
if ! GOBIN="$work/bin" go install "$tool@$version" 2>"$work/get.log"; then
	skip "cannot install $tool@$version: $(tail -1 "$work/get.log")"
fi
(
	mkdir "$work/probe-mod" && cd "$work/probe-mod" &&
		go mod init probe >/dev/null 2>&1 &&
		go get "$tool/testing@$version" >/dev/null 2>"$work/get.log"
) || skip "cannot fetch $tool/testing@$version: $(tail -1 "$work/get.log")"
echo "go-118-fuzz-build: $version"

# The working tree as git sees it (tracked and untracked, not ignored), so
# that built binaries stay out; a plain copy where there is no git.
if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$root" && git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do [[ -e $f ]] && printf '%s\0' "$f"; done |
		tar --null -T - -cf -) | tar -xf - -C "$work/src/tlcheck"
else
	cp -a "$root/." "$work/src/tlcheck"
fi

# A stand-in for compile_native_go_fuzzer, restating what the builder
# image's script does outside coverage builds: find the one file that
# names the function, check that it is a testing.F target, build the
# archive with go-118-fuzz-build and link it with libFuzzer.
cat >"$work/bin/compile_native_go_fuzzer" <<'EOF'
#!/usr/bin/env bash
set -euo pipefail
path=$1 function=$2 fuzzer=$3
dir=$(go list -tags gofuzz -f '{{.Dir}}' "$path")
mapfile -t files < <(grep -r -l -s -F "$function" "$dir")
if ((${#files[@]} != 1)); then
	echo "compile_native_go_fuzzer: $function named in ${#files[@]} files under $path: ${files[*]#"$dir"/}" >&2
	exit 1
fi
if ! grep -q "func $function(.* \*testing\.F)" "${files[0]}"; then
	echo "compile_native_go_fuzzer: no func $function(f *testing.F) in ${files[0]#"$dir"/}" >&2
	exit 1
fi
go-118-fuzz-build -tags gofuzz -o "$fuzzer.a" -func "$function" "$dir"
$CXX $CXXFLAGS $LIB_FUZZING_ENGINE "$fuzzer.a" -o "$OUT/$fuzzer"
EOF
chmod +x "$work/bin/compile_native_go_fuzzer"

# The builder's environment for an address build; Go code itself is not
# instrumented by ASan, but the link is the one OSS-Fuzz makes.
start=$SECONDS
(
	cd "$work/src/tlcheck"
	export SRC="$work/src" OUT="$work/out" WORK="$work" PATH="$work/bin:$PATH"
	export CXX="$cxx" CXXFLAGS="-fsanitize=address" LIB_FUZZING_ENGINE="-fsanitize=fuzzer"
	export SANITIZER=address FUZZING_ENGINE=libfuzzer GO118_FUZZ_BUILD_VERSION="$version"
	bash .clusterfuzzlite/build.sh
) >"$work/build.log" 2>&1 || {
	tail -40 "$work/build.log" >&2
	echo "FAIL: .clusterfuzzlite/build.sh" >&2
	exit 1
}
echo "built in $((SECONDS - start))s: $(cd "$work/out" && echo *)"

# The targets build.sh must have built: each build_target line's name.
mapfile -t want < <(sed -n 's/^build_target [^ ]* [^ ]* \([A-Za-z0-9_]*\)$/\1/p' "$root/.clusterfuzzlite/build.sh")
for name in "${want[@]}"; do
	[[ -x $work/out/$name ]] || {
		echo "FAIL: build.sh made no $name" >&2
		exit 1
	}
done
targets=("$target")
if [[ $target == all ]]; then
	targets=("${want[@]}")
fi

# FuzzCRuntime drives examples/cruntime's driver, which it cannot build
# from libFuzzer's working folder: build it here and name it.
if command -v "${CC:-gcc}" >/dev/null; then
	"${CC:-gcc}" -O2 -o "$work/tlrt-driver" "$root/examples/cruntime/tlrt.c" "$root/examples/cruntime/driver.c"
	export TLCHECK_CRUNTIME_DRIVER="$work/tlrt-driver"
fi

# Run each; a crash fails the script with libFuzzer's report.
cd "$work"
for target in "${targets[@]}"; do
	bin="$work/out/$target"
	[[ -x $bin ]] || {
		echo "FAIL: build.sh made no $target" >&2
		exit 1
	}
	rm -rf "$work/corpus" && mkdir "$work/corpus"
	if ! "$bin" -max_total_time="$seconds" -print_final_stats=1 "$work/corpus" >"$work/run.log" 2>&1; then
		tail -60 "$work/run.log" >&2
		echo "FAIL: $target found a failure (its input is above)" >&2
		exit 1
	fi
	stat() { sed -n "s/^stat::$1: *//p" "$work/run.log"; }
	echo "$target: $(stat number_of_executed_units) execs in ${seconds}s," \
		"$(stat average_exec_per_sec)/s, $(stat new_units_added) new units," \
		"peak RSS $(stat peak_rss_mb) MB; last: $(grep -E '^#[0-9]+' "$work/run.log" | tail -1)"
done

# The build must be able to fail: FuzzProgram, rebuilt against a runtime
# with a known fault on, must crash, and t.Fatal must reach libFuzzer as a
# crash with the shrunk program, not be swallowed by the rewrite.
fault=scope-exit-releases-dead
src="$work/src/tlcheck"
sed -i "s/checkProgram(data, impl.Config{})/checkProgram(data, impl.Config{Faults: []impl.Fault{\"$fault\"}})/" "$src/fuzz/program_test.go"
grep -q "$fault" "$src/fuzz/program_test.go" || {
	echo "FAIL: could not turn $fault on in fuzz/program_test.go (has FuzzProgram's body changed?)" >&2
	exit 1
}
(cd "$src" && PATH="$work/bin:$PATH" go-118-fuzz-build -tags gofuzz -o faulty.a -func FuzzProgram ./fuzz &&
	"$cxx" -fsanitize=address -fsanitize=fuzzer faulty.a -o "$work/faulty") >"$work/faulty-build.log" 2>&1 || {
	tail -20 "$work/faulty-build.log" >&2
	echo "FAIL: building FuzzProgram with $fault" >&2
	exit 1
}
mkdir "$work/faulty-corpus"
start=$SECONDS
if "$work/faulty" -max_total_time=120 "$work/faulty-corpus" >"$work/faulty.log" 2>&1; then
	echo "FAIL: FuzzProgram ran 120s with $fault on and found nothing" >&2
	exit 1
fi
grep -q '^shrunk program:' "$work/faulty.log" && ls "$work"/crash-* >/dev/null 2>&1 || {
	tail -30 "$work/faulty.log" >&2
	echo "FAIL: FuzzProgram with $fault stopped without a crash and its shrunk program" >&2
	exit 1
}
echo "FuzzProgram with $fault: crash after $(grep -E '^#[0-9]+' "$work/faulty.log" | tail -1 | cut -f1 | tr -d "#")" \
	"inputs, $((SECONDS - start))s, shrunk program printed"
