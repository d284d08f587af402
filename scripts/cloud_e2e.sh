#!/usr/bin/env bash
# End-to-end test of the two cloud paths, each in a bare Debian 12 root with only python3 added
# and no GPU (a bwrap container; the Debian root is cached in $LABKIT_E2E_ROOT, default
# /var/tmp/labkit-e2e/bookworm, and copied fresh for each path):
#
#  a) Colab.  The runtime gets what Colab has before a notebook runs (git, pip, an IPython
#     kernel that imports google.colab, here a stand-in, and an older numpy as it starts, as
#     Colab's does).  Chapter 00 runs there, its first cell exactly as committed: its clone of the
#     GitHub URL is redirected by git itself (url.<local>.insteadOf, set through GIT_CONFIG_* in
#     the environment) to a local bare repository holding this checkout's files with the tag
#     v<labkit.__version__>.  First run: the cell installs apt and pip packages and asks for a
#     restart (numpy was imported before it was replaced).  Second run, in a fresh kernel (the
#     restart): the whole chapter runs, every claim and exercise with its committed verdict.
#  b) Binder.  What repo2docker does with binder/: apt.txt installed as root, then as the
#     notebook user requirements.txt and postBuild, on top of a stand-in for the image's own
#     Python with JupyterLab; then chapter 00 in the kernel the notebook names.
#
# "This checkout's files" are the tracked and the new, not ignored ones of the working tree (what
# a commit would hold).  Needs root, debootstrap and bubblewrap on this machine.
#
#   sudo scripts/cloud_e2e.sh            (maintainers; takes several minutes)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
chapter=00_start_here.ipynb
source "$here/scripts/e2e_debian_root.sh"     # root, tools, the cached Debian root in $cache
command -v git >/dev/null || apt-get install -y git
work="$(mktemp -d /var/tmp/labkit-cloud-e2e.XXXXXX)"
trap 'rm -rf "$work"' EXIT
ca="${PIP_CERT:-${SSL_CERT_FILE:-}}"   # this machine reaches PyPI through a proxy with its own CA
total=$SECONDS

# --- the repository as GitHub would serve it at the release tag -----------------------------------
version=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$here/labkit/__init__.py")
url=$(python3 -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["project"]["urls"]["Repository"])' \
  "$here/pyproject.toml")
mkdir "$work/src"
(cd "$here" && git ls-files -z --cached --others --exclude-standard |
  python3 -c 'import os, sys; sys.stdout.write("".join(f + "\0" for f in sys.stdin.read().split("\0") if os.path.isfile(f)))' |
  tar --null -T - -cf -) | tar -xf - -C "$work/src"
git -C "$work/src" init -q -b main
git -C "$work/src" add -A
git -C "$work/src" -c user.name=e2e -c user.email=e2e@localhost commit -q -m "snapshot for cloud_e2e"
git -C "$work/src" tag "v$version"
echo "== repository: $(git -C "$work/src" ls-files | wc -l) files at tag v$version, standing in for $url"

cat > "$work/run_notebook.py" <<'PY'
"""Run a notebook as a hosted runtime does (nothing is saved); exit 0 when it ran as expected.

usage: run_notebook.py NOTEBOOK KERNEL EXPECT   (KERNEL "-": the notebook's own; EXPECT: pass | restart)
"""
import os
import sys
import tempfile

import nbformat
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

path, kernel, expect = sys.argv[1:4]
nb = nbformat.read(path, as_version=4)


def texts(notebook):
    for cell in notebook.cells:
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if out.output_type in ("display_data", "execute_result"):
                yield out.data.get("text/plain", "")


def verdicts(notebook):   # the first line of every claim and exercise result, in order
    return [t.splitlines()[0] for t in texts(notebook) if t.startswith(("✔ ", "✘ "))]


committed = verdicts(nb)
for cell in nb.cells:   # a fresh run: nothing of the committed outputs may count
    if cell.cell_type == "code":
        cell.outputs, cell.execution_count = [], None
kernel = nb.metadata.kernelspec.name if kernel == "-" else kernel
manager = AsyncKernelManager(kernel_name=kernel, transport="ipc", ip=os.path.join(tempfile.mkdtemp(), "k"))
client = NotebookClient(nb, km=manager, timeout=900, resources={"metadata": {"path": os.path.dirname(path)}})
try:
    client.execute()
    error = None
except CellExecutionError as exc:
    error = f"{exc.ename}: {exc.evalue}"
first = next(c for c in nb.cells if c.cell_type == "code")
shown = "".join(o.get("text") or (o.get("evalue", "") + "\n") for o in first.outputs)
print("   | " + shown.rstrip().replace("\n", "\n   | "))
ran = verdicts(nb)
unexpected = [v for v in ran if v.startswith("✘ ") and not v.startswith("✘ does not hold, as expected")]
banner = "".join(o.get("text", "") for o in first.outputs if o.output_type == "stream")
print(f"   kernel {kernel}: {len(ran)} claims and exercises ran ({len(committed)} in the committed "
      f"notebook), {len(unexpected)} failed, same verdicts as committed: {ran == committed}; error: {error}")
for v in unexpected:
    print("   " + v)
if expect == "restart":
    ok = error is not None and "Restart the session" in error and not ran
else:
    ok = error is None and not unexpected and ran == committed and "GL egl: llvmpipe" in banner
sys.exit(0 if ok else 1)
PY

new_root() {  # a fresh copy of the bare Debian root, with the proxy CA, this script's helper, python3
  root="$work/$1"
  cp -a "$cache" "$root"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  [ -n "$ca" ] && cp "$ca" "$root/etc/e2e-ca.pem"
  mkdir -p "$root/e2e" && cp "$work/run_notebook.py" "$root/e2e/"
}
inside() {  # run a command as root inside $root (a container made by bwrap); extra env: VAR=value ... --
  local env=()
  while [ "$1" != "--" ]; do env+=(--setenv "${1%%=*}" "${1#*=}"); shift; done; shift
  bwrap --bind "$root" / --dev /dev --proc /proc --tmpfs /tmp --tmpfs /run --unshare-ipc --unshare-pid \
    --cap-add ALL --die-with-parent --clearenv --setenv HOME /root --setenv PATH /usr/sbin:/usr/bin:/sbin:/bin \
    ${ca:+--setenv PIP_CERT /etc/e2e-ca.pem --setenv REQUESTS_CA_BUNDLE /etc/e2e-ca.pem} \
    --setenv LANG C.UTF-8 ${env[@]+"${env[@]}"} "$@"
}
timed() {  # timed LABEL LOG command...: run, print the time, show the log's tail on failure
  local label="$1" log="$2" start=$SECONDS; shift 2
  if "$@" > "$log" 2>&1; then echo "   $label: $((SECONDS - start)) s"
  else echo "   $label: FAILED after $((SECONDS - start)) s"; tail -40 "$log"; exit 1; fi
}
bare() {
  timed "bare Debian 12 + python3 (apt)" "$work/$1-python3.log" \
    inside DEBIAN_FRONTEND=noninteractive -- sh -c 'apt-get update -q && apt-get install -y -q --no-install-recommends python3'
}


# --- a) Colab --------------------------------------------------------------------------------------
echo "== a) Colab path"
new_root colab
bare colab
git clone -q --bare "$work/src" "$root/srv/git/mujoco-by-experiment.git"
timed "what Colab has before the cell (git, pip, ipykernel; google.colab, numpy 2.0.2 imported at start)" "$work/colab-base.log" \
  inside DEBIAN_FRONTEND=noninteractive -- sh -c '
    apt-get install -y -q --no-install-recommends git python3-pip &&
    rm -f /usr/lib/python3*/EXTERNALLY-MANAGED &&
    python3 -m pip install -q --root-user-action=ignore ipykernel nbclient numpy==2.0.2 &&
    colab="$(python3 -c "import site; print(site.getsitepackages()[0])")/google/colab" &&
    mkdir -p "$colab" /root/.ipython/profile_default/startup /content &&
    echo "\"\"\"A stand-in: the cell looks for google.colab in sys.modules.\"\"\"" > "$colab/__init__.py" &&
    echo "import google.colab, numpy" > /root/.ipython/profile_default/startup/00-like-colab.py'
cp "$work/src/course/$chapter" "$root/content/"
redirect=(GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=url.file:///srv/git/mujoco-by-experiment.git.insteadOf
          "GIT_CONFIG_VALUE_0=$url")
echo "   first run (the cell installs, then asks for a restart):"
timed "first run" "$work/colab-run1.log" inside "${redirect[@]}" -- sh -c "cd /content && python3 /e2e/run_notebook.py $chapter python3 restart"
sed 's/^/ /' "$work/colab-run1.log"
echo "   second run, in a fresh kernel (the restart):"
timed "second run" "$work/colab-run2.log" inside "${redirect[@]}" -- sh -c "cd /content && python3 /e2e/run_notebook.py $chapter python3 pass"
sed 's/^/ /' "$work/colab-run2.log"
inside -- sh -c 'cd /content/mujoco-by-experiment && echo "   clone: $(git describe --tags) of $(git remote get-url origin)" &&
  python3 -m pip show mujoco-by-experiment | grep -i "^editable" | sed "s/^/   /"'
rm -rf "$root"

# --- b) Binder -------------------------------------------------------------------------------------
echo "== b) Binder path"
new_root binder
bare binder
mkdir -p "$root/home/jovyan"
git -C "$work/src" archive HEAD | tar -xf - -C "$root/home/jovyan"
as_user=(setpriv --reuid=1000 --regid=1000 --clear-groups env HOME=/home/jovyan USER=jovyan
         PATH=/srv/conda/envs/notebook/bin:/usr/bin:/bin)
timed "image stand-in (a notebook user, a Python 3.11 environment with JupyterLab)" "$work/binder-base.log" \
  inside DEBIAN_FRONTEND=noninteractive -- sh -c '
    apt-get install -y -q --no-install-recommends python3-venv &&
    useradd -u 1000 -d /home/jovyan -s /bin/bash jovyan && mkdir -p /srv/conda/envs &&
    chown -R jovyan:jovyan /home/jovyan /srv/conda &&
    '"${as_user[*]}"' sh -c "python3 -m venv /srv/conda/envs/notebook && pip install -q jupyterlab"'
timed "apt.txt (root)" "$work/binder-apt.log" inside DEBIAN_FRONTEND=noninteractive -- sh -c \
  'apt-get update -q && apt-get install --yes --no-install-recommends $(sed "s/#.*//" /home/jovyan/binder/apt.txt)'
timed "requirements.txt (notebook user)" "$work/binder-pip.log" inside -- "${as_user[@]}" \
  sh -c 'cd /home/jovyan && pip install --no-cache-dir -q -r binder/requirements.txt'
timed "postBuild (notebook user)" "$work/binder-postbuild.log" inside -- "${as_user[@]}" \
  sh -c 'cd /home/jovyan && chmod +x binder/postBuild && ./binder/postBuild && jupyter kernelspec list'
sed 's/^/   | /' "$work/binder-postbuild.log"
timed "chapter 00 in the kernel it names" "$work/binder-run.log" inside -- "${as_user[@]}" \
  sh -c "cd /home/jovyan/course && python /e2e/run_notebook.py $chapter - pass"
sed 's/^/ /' "$work/binder-run.log"

echo "cloud e2e: passed in $((SECONDS - total)) s"

