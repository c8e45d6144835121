#!/usr/bin/env bash
# Links one instruction-set level's kernel objects (CMakeLists.txt, "kernel
# families per instruction set") into a single relocatable object in which
# nothing collides with the other levels' copies of the same sources.
#
#   isa_object.sh LEVEL OUT LD OBJCOPY NM OBJ...
#
# Each level compiles the same files with its own -m flags, so every
# function with external linkage exists once per level: inline functions
# and template instantiations from headers (fastt's and the standard
# library's) as COMDAT copies, which the final link would otherwise fold
# into one arbitrary copy -- an AVX-512 std::vector<float> growth or
# functor loop called from the SSE2 kernels, an illegal instruction on a
# CPU without AVX-512. So after `ld -r` every function the objects define
# (strong or weak) is renamed with the level as suffix; renaming the
# symbol also renames its COMDAT group, so the levels' groups stay apart.
# The entry points fastt::register_<family>_kernels() become the C names
# fastt_isa_<LEVEL>_register_<family> that csrc/dispatch.cpp declares.
# Data symbols keep their names: weak data (an inline variable, a static
# inside an inline function) is one object shared by every level, as
# C++ requires; a strong data definition in a family file is a duplicate
# definition at link time (make it static).
set -euo pipefail
level=$1 out=$2 ld=$3 objcopy=$4 nm=$5
shift 5
tmp="$out.tmp.o"
map="$out.syms"
"$ld" -r -o "$tmp" "$@"
# nm -P: "name type value size"; T/W are defined global/weak functions.
"$nm" -P --defined-only "$tmp" | awk -v lv="$level" '
  $2 == "T" || $2 == "W" {
    n = $1
    if (match(n, /^_ZN5fastt[0-9]+register_[A-Za-z0-9_]+_kernelsEv$/)) {
      fam = n
      sub(/^_ZN5fastt[0-9]+register_/, "", fam)
      sub(/_kernelsEv$/, "", fam)
      print n " fastt_isa_" lv "_register_" fam
    } else {
      print n " " n "__isa_" lv
    }
  }' > "$map"
# COMDAT groups are kept or dropped by their signature name, which is not
# always one of the functions above (a constructor's C1/C2 pair sits in a
# group named by its C5 name): code groups are renamed by signature too,
# so that no level's group replaces another's. Data groups (weak data)
# keep their names and stay shared.
"${READELF:-readelf}" -g -W "$tmp" | awk -v lv="$level" '
  /COMDAT group section/ {
    if (sig != "" && code) print sig " " sig "__isa_" lv
    sig = $0
    sub(/^.*`.group. \[/, "", sig)
    sub(/\] contains.*$/, "", sig)
    code = 0
    next
  }
  /\] +\.text/ { code = 1 }
  END { if (sig != "" && code) print sig " " sig "__isa_" lv }' |
  awk 'NR == FNR { seen[$1] = 1; next } !($1 in seen)' "$map" - >> "$map.groups"
cat "$map.groups" >> "$map"
rm -f "$map.groups"
# A vtable in a family file would point every level at one level's
# virtual functions; none exists today, and none may appear silently.
if "$nm" -P --defined-only "$tmp" | awk '$1 ~ /^_ZTV/ {found = 1} END {exit !found}'; then
  echo "isa_object.sh: $out: a vtable in a per-ISA kernel file" \
       "(virtual functions would be shared across levels):" >&2
  "$nm" -P --defined-only "$tmp" | awk '$1 ~ /^_ZTV/ {print "  " $1}' >&2
  exit 1
fi
# Below AVX-512 no instruction may touch a zmm register, and at the
# baseline none a ymm one either, save in the functions that ask for AVX2
# themselves (kernels/cpu/optim.cpp's *_fma builds, target attribute):
# wider code here means a header or flag leaked into the wrong level.
# (VEX-encoded "v..." mnemonics at the baseline; zmm or mask registers at
# AVX2.)
case $level in
  sse2) wide=':\tv[a-z]|%[yz]mm' ;;
  avx2) wide='%zmm|%k[0-7]' ;;
  *) wide='' ;;
esac
if [ -n "$wide" ]; then
  bad=$("${OBJDUMP:-objdump}" -d --no-show-raw-insn "$tmp" | awk -v w="$wide" '
    /^[0-9a-f]+ <.*>:$/ { fn = $2; next }
    $0 ~ w && fn !~ /_fma[A-Z<I]/ { n[fn]++ }
    END { for (f in n) print "  " f }' | head -20)
  if [ -n "$bad" ]; then
    echo "isa_object.sh: $out: instructions wider than $level in:" >&2
    echo "$bad" >&2
    exit 1
  fi
fi
"$objcopy" --redefine-syms="$map" "$tmp" "$out"
rm -f "$tmp"
