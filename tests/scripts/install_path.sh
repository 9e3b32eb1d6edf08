#!/usr/bin/env bash
# tests/scripts/install_path.sh: the scripts' install path on a machine
# without the packages, with nothing installed for real. Stubs first on
# PATH stand in for Debian: `dpkg -s` reports every package as not
# installed, `apt-get` prints noise on stdout and stderr (as the real one
# does) and succeeds or fails as told, `id -u` says root or not, `sudo`
# runs its command.
#
#   install_path.sh demo <build-dir> <work-dir>
#       scripts/lib.sh's tp_build_demo (what scripts/demo and
#       scripts/sim-table run in `$(...)`) installs, configures and builds
#       the demo and prints only its path, which runs `--quick`. It reuses
#       <build-dir> (a configured build folder with the examples, this
#       test's own: configuring it again with its own settings changes
#       nothing) where its generator is the one the scripts pick, and
#       builds the demo alone in <work-dir> otherwise.
#   install_path.sh fails <build-dir> <work-dir>
#       apt-get fails (its update, then its install): one line
#       `error: ...` naming every missing package, nothing on stdout,
#       nothing configured; scripts/bench kernel-pipe likewise for its own
#       packages.
#   install_path.sh nonroot <build-dir> <work-dir>
#       not root: with sudo, apt-get runs through it; without sudo, one
#       line naming the packages, and apt-get never runs. The kernel
#       bench's packages install quietly too.
# Exits 0 when every check holds; prints each failed check.
set -euo pipefail

case_name="${1:?case: demo, fails or nonroot}"
build="${2:?build folder}"
work="${3:?work folder}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

rm -rf "$work"
mkdir -p "$work/stubs"
stubs="$work/stubs"
log="$work/apt-get.log"
: >"$log"

failures=0
check() {  # check <what> <command...>: runs the command; records a failure
  local what="$1"
  shift
  if "$@"; then
    printf 'ok: %s\n' "$what"
  else
    printf 'FAILED: %s\n' "$what" >&2
    failures=$((failures + 1))
  fi
}

# The stubs use shell builtins only, so that they work on a PATH of stubs
# alone (the no-sudo case).
cat >"$stubs/dpkg" <<'EOF'
#!/bin/sh
# dpkg -s PKG: not installed.
printf "dpkg-query: package '%s' is not installed and no information is available\n" "$2" >&2
exit 1
EOF
cat >"$stubs/apt-get" <<'EOF'
#!/bin/sh
# Logs its arguments; noise on both streams; fails where STUB_APT_FAIL
# names its first argument (update or install).
printf '%s\n' "$*" >>"$STUB_APT_LOG"
printf 'Get:1 http://deb.debian.org/debian bookworm InRelease [151 kB]\n'
printf 'Reading package lists... Done\n'
printf 'W: noise on stderr\n' >&2
if [ "${STUB_APT_FAIL:-}" = "$1" ]; then
  printf 'E: Unable to locate package (stub)\n' >&2
  exit 100
fi
exit 0
EOF
cat >"$stubs/id" <<'EOF'
#!/bin/sh
printf '%s\n' "${STUB_UID:-0}"
EOF
cat >"$stubs/sudo" <<'EOF'
#!/bin/sh
printf 'sudo\n' >>"$STUB_APT_LOG"
exec "$@"
EOF
chmod +x "$stubs"/*
export STUB_APT_LOG="$log"
export STUB_UID=0
unset STUB_APT_FAIL
stub_path="$stubs:$PATH"

# shellcheck source=scripts/lib.sh
. "$root/scripts/lib.sh"

# run_lib <out> <err> <function and arguments...>: runs a scripts/lib.sh
# function in a fresh shell on the stub PATH; returns its status.
run_lib() {
  local out="$1" err="$2"
  shift 2
  # shellcheck disable=SC2016  # expanded by the inner shell
  PATH="$stub_path" "$BASH" -c 'set -euo pipefail; . "$1"; shift; "$@"' run_lib \
    "$root/scripts/lib.sh" "$@" >"$out" 2>"$err"
}

# one_error_line <err> <packages...>: stderr holds exactly one `error:`
# line, the last, and it names every package.
one_error_line() {
  local err="$1" pkg line
  shift
  [ "$(grep -c '^error: ' "$err")" -eq 1 ] || { echo "not one error line in:" >&2; cat "$err" >&2; return 1; }
  line="$(tail -n 1 "$err")"
  case "$line" in error:*) ;; *) echo "the last line is not the error: $line" >&2; return 1 ;; esac
  for pkg in "$@"; do
    case " $line " in *" $pkg "* | *" $pkg:"*) ;; *) echo "'$pkg' missing from: $line" >&2; return 1 ;; esac
  done
}

# installed_all <packages...>: apt-get ran `update`, then one install of
# exactly these packages.
installed_all() {
  grep -qx 'update' "$log" &&
    grep -qx "install -y --no-install-recommends $*" "$log"
}

case "$case_name" in
  demo)
    # Reuse the build folder when the scripts would configure it as it is.
    cache="$build/CMakeCache.txt"
    dir="$work/demo-build"
    cxx="${CXX:-g++}"
    args=(-DTASKPLACE_BUILD_TESTS=OFF)
    if [ -f "$cache" ] &&
       grep -qx "CMAKE_GENERATOR:INTERNAL=$(tp_generator)" "$cache" &&
       grep -q '^TASKPLACE_BUILD_EXAMPLES:BOOL=ON$' "$cache"; then
      dir="$build"
      cxx="$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$cache")"
      args=("-DCMAKE_BUILD_TYPE=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$cache")")
      echo "reusing $dir ($cxx, ${args[0]})"
    else
      echo "building the demo alone in $dir"
    fi
    status=0
    run_lib "$work/out" "$work/err" tp_build_demo "$dir" "$cxx" "${args[@]}" || status=$?
    check "tp_build_demo succeeds (status $status)" test "$status" -eq 0
    check "stdout is one line" test "$(wc -l <"$work/out")" -eq 1
    demo="$(cat "$work/out")"
    check "that line is the demo's executable ($demo)" test -x "$demo"
    check "apt-get's stdout went to stderr" grep -q '^Get:1 ' "$work/err"
    check "every package of TP_APT_PACKAGES was installed" installed_all "${TP_APT_PACKAGES[@]}"
    if [ -x "$demo" ]; then
      status=0
      "$demo" --quick --out "$work/demo-out" >"$work/demo.txt" 2>&1 || status=$?
      check "the demo runs --quick (status $status)" test "$status" -eq 0
      check "the demo simulated its scenario" grep -q '^simulated [0-9]* events' "$work/demo.txt"
    fi
    ;;
  fails)
    for step in update install; do
      : >"$log"
      status=0
      STUB_APT_FAIL="$step" run_lib "$work/out" "$work/err" \
        tp_build_demo "$work/never-built" g++ || status=$?
      check "apt-get $step failing fails tp_build_demo" test "$status" -ne 0
      check "apt-get $step failing: nothing on stdout" test ! -s "$work/out"
      check "apt-get $step failing: one error line naming the packages" \
        one_error_line "$work/err" "${TP_APT_PACKAGES[@]}"
      check "apt-get $step failing: the error says what failed" \
        grep -q "^error: .*apt-get $step failed (exit 100)" "$work/err"
      check "apt-get $step failing: nothing configured" test ! -e "$work/never-built"
    done
    # The kernel bench's packages, through scripts/bench itself: it stops
    # at the install, before running anything.
    : >"$log"
    status=0
    PATH="$stub_path" STUB_APT_FAIL=install TASKPLACE_BENCH_BUILD="$work/never-built" \
      "$root/scripts/bench" kernel-pipe >"$work/out" 2>"$work/err" || status=$?
    check "scripts/bench kernel-pipe fails when apt-get does" test "$status" -ne 0
    check "scripts/bench kernel-pipe: nothing on stdout" test ! -s "$work/out"
    check "scripts/bench kernel-pipe: one error line naming its packages" \
      one_error_line "$work/err" "${TP_APT_KERNEL_BENCH_PACKAGES[@]}"
    ;;
  nonroot)
    export STUB_UID=1000
    # With sudo: apt-get runs through it, quietly on stdout.
    : >"$log"
    status=0
    run_lib "$work/out" "$work/err" tp_ensure_packages || status=$?
    check "not root, with sudo: succeeds (status $status)" test "$status" -eq 0
    check "not root, with sudo: nothing on stdout" test ! -s "$work/out"
    check "not root, with sudo: apt-get ran through sudo, twice" \
      test "$(grep -c '^sudo$' "$log")" -eq 2
    check "not root, with sudo: every package installed" installed_all "${TP_APT_PACKAGES[@]}"
    : >"$log"
    status=0
    run_lib "$work/out" "$work/err" tp_ensure_packages "${TP_APT_KERNEL_BENCH_PACKAGES[@]}" || status=$?
    check "the kernel bench's packages: succeeds (status $status)" test "$status" -eq 0
    check "the kernel bench's packages: nothing on stdout" test ! -s "$work/out"
    check "the kernel bench's packages: installed" installed_all "${TP_APT_KERNEL_BENCH_PACKAGES[@]}"
    # Without sudo: a PATH of the stubs (no sudo among them) and the two
    # tools the install step uses besides.
    mkdir -p "$work/nosudo"
    for tool in dpkg apt-get id; do ln -s "$stubs/$tool" "$work/nosudo/$tool"; done
    for tool in grep env; do ln -s "$(command -v "$tool")" "$work/nosudo/$tool"; done
    : >"$log"
    status=0
    stub_path="$work/nosudo" run_lib "$work/out" "$work/err" tp_ensure_packages || status=$?
    check "not root, no sudo: fails" test "$status" -ne 0
    check "not root, no sudo: nothing on stdout" test ! -s "$work/out"
    check "not root, no sudo: one error line naming the packages" \
      one_error_line "$work/err" "${TP_APT_PACKAGES[@]}"
    check "not root, no sudo: the error says why" grep -q '^error: .*not root and no sudo' "$work/err"
    check "not root, no sudo: apt-get never ran" test ! -s "$log"
    ;;
  *)
    echo "unknown case '$case_name' (demo, fails or nonroot)" >&2
    exit 2
    ;;
esac

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
