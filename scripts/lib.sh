# shellcheck shell=bash
# Shared shell functions for scripts/test and scripts/demo. Source it; do not run it.
#
# The target machine is a fresh Debian 12 run as root with only Debian's
# apt repositories reachable: everything the build needs comes from the
# package list below, and nothing is downloaded at configure time.

# Every Debian package the build, the tests, the examples and the benchmarks
# use, but for the kernel bench's two below. The one place to add a
# dependency.
TP_APT_PACKAGES=(
  cmake ninja-build g++ clang libclang-rt-14-dev pkg-config python3
  catch2 librapidcheck-dev libbenchmark-dev
  libboost-test-dev libboost-fiber-dev libboost-context-dev libboost-system-dev
  librange-v3-dev libhwloc-dev hwloc libtbb-dev
  valgrind
  gnuplot-nox
)
# Only `scripts/bench kernel-pipe` and `kernel-hackbench` use these: perf
# (its `bench sched pipe` and `bench sched messaging`, and `stat`) and
# taskset, which Debian 12 ships in util-linux.
# shellcheck disable=SC2034  # read by scripts/bench, which sources this file
TP_APT_KERNEL_BENCH_PACKAGES=(linux-perf util-linux)

tp_log() { printf '==> %s\n' "$*" >&2; }
tp_die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# The repository root (the folder above scripts/).
tp_repo_root() {
  local here
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  dirname "$here"
}

tp_jobs() { nproc 2>/dev/null || echo 2; }

# Installs the packages named (default: TP_APT_PACKAGES) that dpkg does not
# report as installed: one `apt-get update`, then one install. Needs root
# (or sudo) only when something is missing. Every message, apt-get's
# included, goes to stderr: a caller may capture stdout (`$(...)`) and get
# nothing from here. Fails with one line naming the missing packages when
# they cannot be installed.
# shellcheck disable=SC2120  # only scripts/bench kernel-* passes packages
tp_ensure_packages() {
  local missing=() pkg want=("$@")
  [ "$#" -gt 0 ] || want=("${TP_APT_PACKAGES[@]}")
  for pkg in "${want[@]}"; do
    if ! dpkg -s "$pkg" 2>/dev/null | grep -q '^Status: install ok installed'; then
      missing+=("$pkg")
    fi
  done
  if [ "${#missing[@]}" -eq 0 ]; then
    return 0
  fi
  tp_log "installing missing packages: ${missing[*]}"
  # sudo resets the environment: DEBIAN_FRONTEND goes through env(1).
  local sudo=() rc=0
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 ||
      tp_die "not root and no sudo to install the missing packages; as root, run: apt-get install ${missing[*]}"
    sudo=(sudo)
  fi
  "${sudo[@]}" apt-get update >&2 || rc=$?
  [ "$rc" -eq 0 ] ||
    tp_die "apt-get update failed (exit $rc), so these are not installed: ${missing[*]}"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    "${missing[@]}" >&2 || rc=$?
  [ "$rc" -eq 0 ] ||
    tp_die "apt-get install failed (exit $rc) for: ${missing[*]}"
}

# Ninja when installed, Unix Makefiles otherwise.
tp_generator() {
  if command -v ninja >/dev/null 2>&1; then
    echo Ninja
  else
    echo "Unix Makefiles"
  fi
}

# tp_configure <build-dir> <c++ compiler> <extra cache args...>
# Configures the repository into <build-dir> (Debug unless an argument says
# otherwise). A build dir made by another generator or compiler is wiped
# first. CMake's messages go to stderr.
tp_configure() {
  local dir="$1" cxx="$2"
  shift 2
  local root gen
  root="$(tp_repo_root)"
  gen="$(tp_generator)"
  if [ -f "$dir/CMakeCache.txt" ] &&
     ! grep -qx "CMAKE_GENERATOR:INTERNAL=$gen" "$dir/CMakeCache.txt"; then
    tp_log "$dir was made by another generator: starting it afresh"
    rm -rf "$dir"
  fi
  local want have
  want="$(command -v "$cxx" || echo "$cxx")"
  have="$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$dir/CMakeCache.txt" 2>/dev/null || true)"
  if [ -n "$have" ]; then
    have="$(command -v "$have" || echo "$have")"
  fi
  if [ -n "$have" ] && [ "$have" != "$want" ]; then
    tp_log "$dir was made with $have, not $want: starting it afresh"
    rm -rf "$dir"
  fi
  cmake -S "$root" -B "$dir" -G "$gen" \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER="$cxx" "$@" >&2
}

# tp_build <build-dir> [targets...]: builds with every core, going on past
# a failed target so that the others are still built (their tests still
# run); returns non-zero when anything failed. The build's messages go to
# stderr.
tp_build() {
  local dir="$1"
  shift
  local targets=() keep_going=(-k)
  if [ "$#" -gt 0 ]; then
    targets=(--target "$@")
  fi
  if grep -qx 'CMAKE_GENERATOR:INTERNAL=Ninja' "$dir/CMakeCache.txt" 2>/dev/null; then
    keep_going=(-k 0)
  fi
  cmake --build "$dir" -j "$(tp_jobs)" "${targets[@]}" -- "${keep_going[@]}" >&2
}

# tp_ctest_count <build-dir> <ctest selection args...>: how many tests the
# selection names (0 when none).
tp_ctest_count() {
  local dir="$1"
  shift
  (cd "$dir" && ctest -N "$@") | sed -n 's/^Total Tests: \([0-9][0-9]*\)$/\1/p'
}

# tp_ctest_names <build-dir> <ctest selection args...>: the selected tests'
# names, one a line.
tp_ctest_names() {
  local dir="$1"
  shift
  (cd "$dir" && ctest -N "$@") | sed -n 's/^ *Test *#[0-9]*: \(.*\)$/\1/p'
}

# tp_ctest_targets <build-dir> <ctest selection args...>: the selected tests
# that are also build targets (a test that runs a script or a CMake check
# has none), one a line: what to build before running the selection.
tp_ctest_targets() {
  local dir="$1"
  shift
  local known
  known="$(cmake --build "$dir" --target help | sed -n -e 's/^\([A-Za-z0-9_.+-]*\): .*$/\1/p' -e 's/^\.\.\. \([A-Za-z0-9_.+-]*\).*$/\1/p')"
  tp_ctest_names "$dir" "$@" | grep -Fx -f <(printf '%s\n' "$known") || true
}

# A command (with arguments) to run ctest under, e.g. (setarch x86_64 -R).
TP_CTEST_WRAP=()

# tp_ctest <build-dir> <log> <ctest args...>: runs ctest in parallel with
# output on failure, tees its output to <log> and writes its results as
# JUnit XML to <log>.xml (ctest --output-junit, CMake 3.21); returns
# ctest's status.
tp_ctest() {
  local dir="$1" log="$2"
  shift 2
  rm -f "$log.xml"
  (cd "$dir" && "${TP_CTEST_WRAP[@]}" ctest --output-on-failure -j "$(tp_jobs)" \
    --output-junit "$log.xml" "$@") 2>&1 | tee "$log"
  return "${PIPESTATUS[0]}"
}

# tp_ctest_totals <junit.xml>: prints "<passed> <failed> <skipped>" from
# ctest's JUnit results ("0 0 0" when the file is absent or unreadable).
# Counted as ctest counts them: a test that ran and passed, or that skipped
# itself (SKIP_RETURN_CODE, SKIP_REGULAR_EXPRESSION), passed; one that
# failed, timed out or could not run (no executable, a failed fixture)
# failed; a disabled test is neither.
tp_ctest_totals() {
  python3 - "$1" <<'EOF'
import sys
import xml.etree.ElementTree as ET
try:
    cases = list(ET.parse(sys.argv[1]).getroot().iter("testcase"))
except (OSError, ET.ParseError):
    cases = []
passed = failed = skipped = 0
for case in cases:
    status = case.get("status")
    skip = case.find("skipped")
    if status == "run":
        passed += 1
    elif status == "notrun" and skip is not None and skip.get("message", "").startswith("SKIP_"):
        passed += 1
        skipped += 1
    elif status != "disabled":
        failed += 1
print(passed, failed, skipped)
EOF
}

# tp_build_demo <build-dir> <c++ compiler> <extra cache args...>: installs
# what is missing, configures <build-dir> with the examples on (Debug
# unless an argument says otherwise), builds the example program
# `taskplace_demo` and prints the path of its executable: the one line on
# stdout, so that `demo="$(tp_build_demo ...)"` captures only the path.
# Every message of the install, configure and build steps goes to stderr.
tp_build_demo() {
  local dir="$1" cxx="$2"
  shift 2
  {
    tp_ensure_packages
    tp_configure "$dir" "$cxx" -DTASKPLACE_BUILD_EXAMPLES=ON "$@" ||
      tp_die "configure of $dir failed"
    # Both generators list their targets under `help`: Ninja as `name: phony`,
    # Makefiles as `... name`. The list is read whole before it is searched:
    # `grep -q` stops at the first match, and under pipefail the SIGPIPE that
    # a long list then gets would read as "no such target".
    local targets
    targets="$(cmake --build "$dir" --target help 2>/dev/null || true)"
    if ! grep -Eq '(^|[ .])taskplace_demo(:|$| )' <<<"$targets"; then
      tp_die "no target named taskplace_demo: it is defined by examples/ (is examples/CMakeLists.txt adding it?)"
    fi
    tp_build "$dir" taskplace_demo || tp_die "build of taskplace_demo failed"
  } >&2
  local demo
  demo="$(find "$dir" -type f -name taskplace_demo -perm -u+x -print -quit)"
  [ -n "$demo" ] || tp_die "taskplace_demo was built but its executable is not under $dir"
  printf '%s\n' "$demo"
}
