#!/usr/bin/env bash
# MuJoCo by Experiment: set up everything, then run the course or its tests.
#
#   ./run.sh lab     set up, then serve JupyterLab on your practice copies (prints the URL):
#                    practice/ holds a blank copy of every chapter, made on the first run
#                    and never overwritten, and reference/, the chapters with solutions
#                    (labkit practice reset 05 | reset 5.2 | reveal 5.2; see the README)
#   ./run.sh test    set up, then run labkit's tests and every notebook under nbval
#   ./run.sh site    set up, then build the course's static site from the committed
#                    notebooks (no re-execution); the last line is the path of index.html
#
# Set-up is idempotent and quick the second time: a virtual environment in .venv
# (override with LABKIT_VENV), the course package with its pinned dependencies, a
# Jupyter kernel, and on Debian/Ubuntu the system GL libraries for headless rendering
# (and, for the tests, Chromium: one test runs a chapter in a real browser; and
# bubblewrap: the grader's sandbox).
# Extra arguments go to JupyterLab or pytest (e.g. ./run.sh test -k start_here), or name
# the site's output folder (default build/site).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
venv="${LABKIT_VENV:-$here/.venv}"
python="${PYTHON:-python3}"
kernel="mujoco-by-experiment"

say() { printf '[run.sh] %s\n' "$*"; }
die() { printf '[run.sh] error: %s\n' "$*" >&2; exit 1; }

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit "${1:-0}"
}

# --- system packages (Debian/Ubuntu): what no pip package can provide ---------------
apt_missing() {  # prints the packages among "$@" that are not installed
  local pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || printf '%s ' "$pkg"
  done
}

apt_install() {  # installs "$@" as root or with sudo, or stops with the exact command
  local cmd="apt-get update && apt-get install -y --no-install-recommends $*"
  if [ "$(id -u)" -eq 0 ]; then
    say "installing system packages: $*"
    DEBIAN_FRONTEND=noninteractive sh -c "$cmd" >/dev/null || die "apt-get failed; run: $cmd"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    say "installing system packages with sudo: $*"
    sudo DEBIAN_FRONTEND=noninteractive sh -c "$cmd" >/dev/null || die "apt-get failed; run: sudo sh -c '$cmd'"
  else
    die "these system packages are missing: $*
  Install them (needs administrator rights), then rerun this command:
    sudo sh -c '$cmd'"
  fi
}

system_packages() {
  command -v "$python" >/dev/null 2>&1 || die "no '$python' found. Install Python 3.11 or newer (or set PYTHON=/path/to/python3.11)."
  "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
    die "$("$python" -V 2>&1) is too old: the course needs Python 3.11 or newer (set PYTHON=/path/to/python3.11)."
  [ "$(uname -s)" = "Linux" ] || return 0   # macOS renders through CGL: nothing to install
  command -v dpkg-query >/dev/null 2>&1 || {
    say "not Debian/Ubuntu: make sure EGL (libEGL, libOpenGL, Mesa drivers) or OSMesa is installed"
    return 0
  }
  local need=""
  # venv + ensurepip come in a separate package on Debian/Ubuntu
  [ -x "$venv/bin/python" ] || "$python" -c 'import ensurepip, venv' 2>/dev/null || need="python3-venv "
  # the site is built from stored outputs: it renders nothing, so it needs no GL
  [ "${1:-}" = site ] || need+="$(apt_missing libegl1 libopengl0 libgl1-mesa-dri)"
  # the test suite opens a chapter in a real browser (tests/test_browser.py) and grades
  # submissions in the grader's sandbox (bubblewrap)
  [ "${1:-}" = test ] && need+="$(apt_missing chromium libatomic1 bubblewrap)"  # libatomic1: Playwright's node
  if [ -n "${need// /}" ]; then apt_install $need; fi
}

# --- the virtual environment and the package ----------------------------------------
# Each command installs what it needs: the course package (lab), plus the optional groups
# of pyproject.toml that it names (test: test and site, whose build the tests check; site:
# site). A stamp per group records the pyproject.toml and Python it was installed for.
python_env() {  # "$@": the optional dependency groups, e.g. test site
  if [ ! -x "$venv/bin/python" ]; then
    say "creating the virtual environment $venv"
    "$python" -m venv "$venv" || die "could not create $venv (on Debian/Ubuntu: apt-get install python3-venv)"
  fi
  local want group stale="" groups spec="."
  # JupyterLab as the course needs it, from the files Binder installs too (binder/postBuild): the
  # widgets' state saved with the notebook (saveState), and a saved widget view whose state is
  # missing turned back into its picture (labkit.widgets.pre_save_hook)
  mkdir -p "$venv/share/jupyter/lab/settings/overrides.d" "$venv/etc/jupyter/jupyter_server_config.d"
  cp binder/overrides.json "$venv/share/jupyter/lab/settings/overrides.d/mujoco-by-experiment.json"
  cp binder/jupyter_server_extension.json "$venv/etc/jupyter/jupyter_server_config.d/mujoco-by-experiment.json"
  want="$("$venv/bin/python" -c 'import hashlib, sys
print(hashlib.sha256(open("pyproject.toml", "rb").read()).hexdigest(), sys.version.split()[0])')"
  for group in course "$@"; do
    [ -f "$venv/.mbe-installed-$group" ] && [ "$(cat "$venv/.mbe-installed-$group")" = "$want" ] || stale=1
  done
  [ -n "$stale" ] || return 0
  groups="$(IFS=,; printf '%s' "$*")"
  [ -z "$groups" ] || spec=".[$groups]"
  say "installing the course${groups:+ (with: $groups)} and its pinned dependencies (first time: a minute or two)"
  # uv installs the same versions as pip in a fifth of the time (18 s against 83 s for the test
  # groups, measured); where it cannot (an index that only pip.conf names, say), pip does
  if ! { "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "uv==0.13.9" &&
         "$venv/bin/python" -m uv pip install --quiet --python "$venv/bin/python" -e "$spec"; }; then
    say "uv could not install them: pip does (slower)"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$spec"
  fi
  "$venv/bin/python" -m ipykernel install --sys-prefix --name "$kernel" \
    --display-name "MuJoCo by Experiment" >/dev/null
  # the test group installs nbgrader (tests/test_nbgrader.py runs it), which switches its
  # JupyterLab menus and server extensions on: keep the learner's JupyterLab as it was
  if [ -x "$venv/bin/nbgrader" ]; then
    "$venv/bin/jupyter" labextension disable --level=sys_prefix @jupyter/nbgrader >/dev/null 2>&1 || true
    for ext in formgrader validate_assignment assignment_list course_list; do
      "$venv/bin/jupyter" server extension disable --sys-prefix "nbgrader.server_extensions.$ext" \
        >/dev/null 2>&1 || true
    done
  fi
  for group in course "$@"; do printf '%s' "$want" > "$venv/.mbe-installed-$group"; done
}

setup() {  # $1: the command; the rest: the optional dependency groups it needs
  system_packages "$1"
  shift
  python_env "$@"
}

case "${1:-}" in
  lab)
    shift
    setup lab
    extra=()
    [ "$(id -u)" -eq 0 ] && extra+=(--allow-root)
    say "starting JupyterLab on your practice copies — open the URL printed below (Ctrl+C stops it)"
    # labkit on PATH: JupyterLab's terminals can run `labkit practice reset 5.2` as they are
    PATH="$venv/bin:$PATH" exec "$venv/bin/labkit" practice lab -- ${extra[@]+"${extra[@]}"} "$@"
    ;;
  test)
    shift
    setup test test site
    exec "$venv/bin/python" -m pytest "$@"
    ;;
  site)
    shift
    setup site site
    say "building the site from the committed notebooks (nothing is executed)"
    exec "$venv/bin/python" scripts/build_site.py "$@"
    ;;
  -h|--help|help) usage 0 ;;
  *) usage 2 ;;
esac
