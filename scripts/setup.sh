#!/usr/bin/env bash
# Installs perflab and what its lenses need, only where something is missing:
#   Debian packages: valgrind, linux-perf, binutils, llvm, gcc, g++, clang, libc6-dbg (and
#   hyperfine with --bench); clang and libc6-dbg build and symbolise the known-answer corpus
#   (tests/corpus): its clang cases and libc's separate debug files under /usr/lib/debug
#   a virtual environment in .venv with perflab (editable) and its Python dependencies
# Options: --test  also the test dependencies, chromium and torch included (the HTML report is
#                  tested in chromium, the torch lens with real torch), PostgreSQL and psycopg
#                  (the team store is tested against a real server), Ray (cluster runs) and
#                  libbenchmark-dev (a real Google Benchmark binary for the --gbench suite)
#          --bench  also pyperf and hyperfine (bench/)
#          --torch also PyTorch 2.13.0 (CPU build)  --browser also chromium (HTML report check)
#          --team  also psycopg, for a team's PostgreSQL store (the `team` extra)
#          --cluster  also Ray, for --ray runs on a cluster (the `cluster` extra)
set -euo pipefail
cd "$(dirname "$0")/.."

want_test=0; want_bench=0; want_torch=0; want_browser=0; want_team=0; want_cluster=0
usage="use --test, --bench, --torch, --browser, --team, --cluster"
for arg in "$@"; do
  case "$arg" in
    --test) want_test=1; want_browser=1; want_torch=1 ;;
    --bench) want_bench=1 ;;
    --torch) want_torch=1 ;;
    --browser) want_browser=1 ;;
    --team) want_team=1 ;;
    --cluster) want_cluster=1 ;;
    *) echo "setup.sh: unknown option $arg ($usage)" >&2; exit 2 ;;
  esac
done

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

# --- Debian packages, installed only when their command is missing
declare -A package_for=(
  [valgrind]=valgrind [perf]=linux-perf [objdump]=binutils [gcc]=gcc
  [llvm-mca]=llvm [llvm-symbolizer]=llvm [setarch]=util-linux [g++]=g++ [clang]=clang
)
[[ $want_bench == 1 ]] && package_for[hyperfine]=hyperfine
[[ $want_browser == 1 ]] && package_for[chromium]=chromium
missing=()
for command in "${!package_for[@]}"; do
  command -v "$command" >/dev/null 2>&1 || missing+=("${package_for[$command]}")
done
# libc's separate debug files (its symbols for perf and the asm lens): a package, not a command
dpkg-query -W -f='${Status}' libc6-dbg 2>/dev/null | grep -q 'ok installed' || missing+=(libc6-dbg)
# the team store's tests start a PostgreSQL server of their own: its binaries, not a service
if [[ $want_test == 1 ]] && ! compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null &&
   ! command -v initdb >/dev/null 2>&1; then
  missing+=(postgresql)
fi
# Google Benchmark's headers and library: the --gbench suite's test builds a real binary with them
if [[ $want_test == 1 ]] && [[ ! -f /usr/include/benchmark/benchmark.h ]]; then
  missing+=(libbenchmark-dev)
fi
if ((${#missing[@]})); then
  packages=$(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')
  say "installing Debian packages: $packages"
  if [[ $(id -u) == 0 ]]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; else
    echo "setup.sh: need root (or sudo) to install: $packages" >&2; exit 1
  fi
  # wait for another apt or setup that holds dpkg's lock (two set-ups at once), not fail at once
  wait_for_lock=(-o DPkg::Lock::Timeout=900)
  $sudo apt-get "${wait_for_lock[@]}" update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $sudo apt-get "${wait_for_lock[@]}" install -y -qq $packages >/dev/null
else
  say "Debian packages: all present"
fi

# --- Python >= 3.11 for perflab itself (variants may use any Python 3.7+)
python=""
for candidate in python3.13 python3.12 python3.11 python3; do
  if command -v "$candidate" >/dev/null &&
     "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    python=$(command -v "$candidate"); break
  fi
done
[[ -n $python ]] || { echo "setup.sh: perflab needs Python 3.11 or newer" >&2; exit 1; }

if [[ ! -x .venv/bin/python ]]; then
  say "creating .venv with $python"
  "$python" -m venv .venv
fi
extras="peers"
[[ $want_test == 1 ]] && extras="test,peers,team,cluster"
# just the extra asked for: a team's store or a cluster needs neither torch nor a browser
[[ $want_test == 0 && $want_team == 1 ]] && extras+=",team"
[[ $want_test == 0 && $want_cluster == 1 ]] && extras+=",cluster"
say "installing perflab[$extras] into .venv"
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[$extras]"
# only when missing: the CPU wheel is large, and a torch already there may be the one under test
if [[ $want_torch == 1 ]] && ! .venv/bin/python -c 'import torch' 2>/dev/null; then
  say "installing torch 2.13.0 (CPU build)"
  .venv/bin/python -m pip install -q --disable-pip-version-check torch==2.13.0
elif [[ $want_torch == 1 ]]; then
  say "torch: present ($(.venv/bin/python -c 'import torch; print(torch.__version__)'))"
fi
say "ready: .venv/bin/perflab --help"
