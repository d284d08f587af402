#!/usr/bin/env bash
# End-to-end test of the Gradescope autograder in a bare Debian root laid out as Gradescope
# lays it out (/autograder/source, /autograder/submission, /autograder/results):
# setup.sh from nothing (no Python, no GL), then run_autograder on a correct, a blank and a
# forged submission of chapter 00, and on two uploads of three copies of the correct one: with
# one named like the chapter (graded once: 5 points, never 15) and with none (refused: 0).  Needs root, debootstrap and bubblewrap on this machine;
# the Debian root is cached in $LABKIT_E2E_ROOT (default /var/tmp/labkit-e2e/bookworm) and
# copied fresh for every run.
#
#   sudo scripts/gradescope_e2e.sh            (maintainers; takes several minutes)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$here/scripts/e2e_debian_root.sh"     # root, tools, the cached Debian root in $cache
work="$(mktemp -d /var/tmp/labkit-e2e.XXXXXX)"
trap 'rm -rf "$work"' EXIT
root="$work/root"
cp -a "$cache" "$root"
cp /etc/resolv.conf "$root/etc/resolv.conf"
ca="${PIP_CERT:-${SSL_CERT_FILE:-}}"
# this machine reaches PyPI through a proxy with its own CA: hand the bundle to pip only
[ -n "$ca" ] && cp "$ca" "$root/etc/e2e-ca.pem"

# the autograder and three submissions, made on this machine with the course's own tools
"$here/.venv/bin/labkit" gradescope "$here/course/00_start_here.ipynb" --out "$work/autograder.zip"
mkdir -p "$root/autograder/source" "$root/autograder/results" "$work/subs"
(cd "$root/autograder/source" && python3 -m zipfile -e "$work/autograder.zip" . && chmod +x setup.sh run_autograder)
"$here/.venv/bin/labkit" student "$here/course/00_start_here.ipynb" "$work/subs/blank" >/dev/null
mkdir -p "$work/subs/correct" "$work/subs/forged" "$work/subs/copies" "$work/subs/ambiguous"
cp "$here/course/00_start_here.ipynb" "$work/subs/correct/"
cp "$here/course/00_start_here.ipynb" "$work/subs/copies/"
for copy in copy.ipynb copy2.ipynb; do cp "$here/course/00_start_here.ipynb" "$work/subs/copies/$copy"; done
for copy in mine.ipynb copy.ipynb copy2.ipynb; do cp "$here/course/00_start_here.ipynb" "$work/subs/ambiguous/$copy"; done
"$here/.venv/bin/python" - "$work/subs" <<'PY'
import sys, nbformat
subs = sys.argv[1]
nb = nbformat.read(f"{subs}/blank/00_start_here.ipynb", as_version=4)
nb.cells.insert(3, nbformat.v4.new_code_cell(
    "import json, labkit.exercises.core as core\n"
    "core.Exercise.score = property(lambda self: self.points)\n"
    "open('/autograder/results/results.json', 'w').write(json.dumps({'score': 5}))\n"
    "print(open('/autograder/source/labkit/exercises/ch00.py').read()[:10])"))
nbformat.write(nb, f"{subs}/forged/00_start_here.ipynb")
PY

inside() {  # run a command as root inside the Debian root (a container made by bwrap)
  # /proc is the host's own (a fresh proc mount with overmounts would stop the nested sandbox)
  bwrap --bind "$root" / --dev /dev --bind /proc /proc --tmpfs /tmp --tmpfs /run --unshare-ipc \
    --cap-add ALL --die-with-parent --clearenv --setenv HOME /root --setenv PATH /usr/sbin:/usr/bin:/sbin:/bin \
    ${ca:+--setenv PIP_CERT /etc/e2e-ca.pem --setenv REQUESTS_CA_BUNDLE /etc/e2e-ca.pem} \
    --setenv LANG C.UTF-8 "$@"
}
echo "== setup.sh (bare Debian 12: $(ls "$root/usr/bin" | grep -c '^python' || true) python binaries before)"
start=$SECONDS
inside bash /autograder/source/setup.sh > "$work/setup.log" 2>&1 || { tail -30 "$work/setup.log"; exit 1; }
tail -1 "$work/setup.log"
echo "   setup.sh took $((SECONDS - start)) s"
status=0
for name in correct blank forged copies ambiguous; do
  rm -rf "$root/autograder/submission" "$root/autograder/results"/*
  mkdir -p "$root/autograder/submission"
  cp "$work/subs/$name/"*.ipynb "$root/autograder/submission/"
  start=$SECONDS
  inside /autograder/source/run_autograder
  score=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['score'])" "$root/autograder/results/results.json")
  echo "== $name: score $score ($((SECONDS - start)) s)"
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print('   output:', r['output'][:300].replace(chr(10), ' | '))" \
    "$root/autograder/results/results.json"
  case "$name:$score" in
    correct:5|correct:5.0|blank:0|blank:0.0|forged:0|forged:0.0|copies:5|copies:5.0|ambiguous:0|ambiguous:0.0) ;;
    *) echo "   UNEXPECTED SCORE"; status=1 ;;
  esac
done
[ $status -eq 0 ] && echo "gradescope e2e: passed" || echo "gradescope e2e: FAILED"
exit $status
