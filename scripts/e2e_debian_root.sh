# Sourced by the end-to-end scripts (gradescope_e2e.sh, cloud_e2e.sh): checks that they run
# as root with debootstrap and bubblewrap, and makes sure a bare Debian 12 root is cached in
# $cache ($LABKIT_E2E_ROOT, default /var/tmp/labkit-e2e/bookworm), which each run copies.
cache="${LABKIT_E2E_ROOT:-/var/tmp/labkit-e2e/bookworm}"
[ "$(id -u)" -eq 0 ] || { echo "run as root (debootstrap, bwrap --cap-add)"; exit 2; }
command -v debootstrap >/dev/null || apt-get install -y debootstrap
command -v bwrap >/dev/null || apt-get install -y bubblewrap
if [ ! -x "$cache/usr/bin/apt-get" ]; then
  mkdir -p "$(dirname "$cache")"
  debootstrap --variant=minbase bookworm "$cache" http://deb.debian.org/debian
fi
