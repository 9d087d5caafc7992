#!/bin/sh
# Installs a released sqsprobe binary, checksum-verified:
#
#   curl -fsSL https://raw.githubusercontent.com/sqsprobe/sqsprobe/main/scripts/install.sh | sh
#   sh install.sh [--version X.Y.Z] [--to DIR]
#
# Downloads the release's SHA256SUMS, finds this machine's archive in it
# (sqsprobe-<version>-<target>.tar.gz, as scripts/package names it), downloads the archive,
# and installs the binary into DIR (default: $HOME/.local/bin) only if its SHA-256 is the one
# SHA256SUMS lists; anything else (a missing archive, a wrong sum, no sha256 tool) exits
# non-zero having installed nothing.
#
# Settings (flags win over the environment):
#   --version / SQSPROBE_VERSION       a release (X.Y.Z or vX.Y.Z); default: the latest
#   --to / SQSPROBE_INSTALL_DIR        where the binary goes
#   SQSPROBE_TARGET                    the archive's target triple; default from uname:
#                                      x86_64/aarch64-unknown-linux-musl (static),
#                                      x86_64/aarch64-apple-darwin
#   SQSPROBE_REPOSITORY                owner/name on GitHub; default sqsprobe/sqsprobe
#   SQSPROBE_DOWNLOAD_URL              the folder holding SHA256SUMS and the archives,
#                                      instead of the GitHub release: an https:// mirror, or
#                                      file:// (plain http:// is refused)
set -eu

version="${SQSPROBE_VERSION:-}"
to="${SQSPROBE_INSTALL_DIR:-${HOME:-.}/.local/bin}"
repository="${SQSPROBE_REPOSITORY:-sqsprobe/sqsprobe}"

say() { printf 'install.sh: %s\n' "$*" >&2; }
fail() { say "$*"; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --version) [ $# -ge 2 ] || fail "--version needs a value"; version="$2"; shift 2 ;;
    --to) [ $# -ge 2 ] || fail "--to needs a folder"; to="$2"; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0" 2>/dev/null || true; exit 0 ;;
    *) fail "unknown option $1 (see --help)" ;;
  esac
done

if [ -n "${SQSPROBE_TARGET:-}" ]; then
  target="$SQSPROBE_TARGET"
else
  os="$(uname -s)"
  arch="$(uname -m)"
  case "$arch" in
    x86_64|amd64) arch=x86_64 ;;
    aarch64|arm64) arch=aarch64 ;;
    *) fail "no release archive for the CPU $arch; build from source: cargo install --locked --git https://github.com/$repository" ;;
  esac
  case "$os" in
    Linux) target="$arch-unknown-linux-musl" ;;
    Darwin) target="$arch-apple-darwin" ;;
    *) fail "no release archive for $os; build from source: cargo install --locked --git https://github.com/$repository" ;;
  esac
fi

if [ -n "${SQSPROBE_DOWNLOAD_URL:-}" ]; then
  base="${SQSPROBE_DOWNLOAD_URL%/}"
elif [ -n "$version" ]; then
  base="https://github.com/$repository/releases/download/v${version#v}"
else
  base="https://github.com/$repository/releases/latest/download"
fi

fetch() {
  if command -v curl >/dev/null 2>&1; then
    curl --proto '=https,file' -fsSL --retry 3 -o "$2" "$1"
  elif command -v wget >/dev/null 2>&1; then
    wget -q -O "$2" "$1"
  else
    fail "neither curl nor wget is installed"
  fi
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d ' ' -f 1
  else
    fail "no sha256sum or shasum to verify the download with"
  fi
}

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT INT TERM

fetch "$base/SHA256SUMS" "$work/SHA256SUMS" || fail "cannot download $base/SHA256SUMS"
# The line of this target's archive: "<sha256>  sqsprobe-<version>-<target>.tar.gz".
line="$(grep -E "^[0-9a-f]{64} [ *]?sqsprobe-[^ ]+-$target\.tar\.gz\$" "$work/SHA256SUMS" | head -n 1 || true)"
[ -n "$line" ] || fail "$base/SHA256SUMS lists no archive for $target"
expected="$(printf '%s\n' "$line" | cut -d ' ' -f 1)"
archive="$(printf '%s\n' "$line" | sed 's/^[0-9a-f]* [ *]*//')"
if [ -n "$version" ]; then
  case "$archive" in
    "sqsprobe-${version#v}-$target.tar.gz") ;;
    *) fail "$base/SHA256SUMS is not version ${version#v}'s: it lists $archive" ;;
  esac
fi

fetch "$base/$archive" "$work/$archive" || fail "cannot download $base/$archive"
actual="$(sha256_of "$work/$archive")"
[ "$actual" = "$expected" ] || fail "checksum mismatch for $archive: SHA256SUMS says $expected, the download is $actual; nothing was installed"

tar -xzf "$work/$archive" -C "$work"
folder="${archive%.tar.gz}"
[ -f "$work/$folder/sqsprobe" ] || fail "$archive holds no $folder/sqsprobe"
mkdir -p "$to"
# Copied next to the old binary and renamed over it: a running sqsprobe keeps its file.
cp "$work/$folder/sqsprobe" "$to/.sqsprobe.new"
chmod 755 "$to/.sqsprobe.new"
mv -f "$to/.sqsprobe.new" "$to/sqsprobe"
say "installed $("$to/sqsprobe" --version) to $to/sqsprobe (SHA-256 verified)"
case ":${PATH:-}:" in
  *":$to:"*) ;;
  *) say "$to is not on PATH; add it, or run $to/sqsprobe" ;;
esac
