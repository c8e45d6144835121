"""Rewrites a CUDA source (.cu / .cuh) into host C++ for the CPU emulation
build (tests/cuda_emu): kernel launches become ::emu::launch calls and
__shared__ declarations become per-block emulated shared memory. Line
numbers are kept (and a #line names the original file) so compiler errors
and backtraces point at the real source.

Usage: transform.py INPUT OUTPUT
"""
import re
import sys


def match_back_angle(s, end):
    """s[end] == '>': index of the matching '<' (template argument list)."""
    depth, i = 0, end
    while i >= 0:
        c = s[i]
        if c == '>':
            depth += 1
        elif c == '<':
            depth -= 1
            if depth == 0:
                return i
        elif c in ';{}':
            break
        i -= 1
    raise SystemExit(f"transform: unbalanced template args before {end}")


def match_paren(s, start):
    """s[start] == '(': index of the matching ')'."""
    depth = 0
    for i in range(start, len(s)):
        if s[i] == '(':
            depth += 1
        elif s[i] == ')':
            depth -= 1
            if depth == 0:
                return i
    raise SystemExit(f"transform: unbalanced parens at {start}")


def rewrite_launches(s, bounds):
    out, pos = [], 0
    while True:
        j = s.find('<<<', pos)
        if j < 0:
            out.append(s[pos:])
            return ''.join(out)
        # The kernel expression: [ident(::ident)*][<template args>] before
        # the <<<, possibly split over lines.
        e = j - 1
        while s[e].isspace():
            e -= 1
        if s[e] == '>':
            e = match_back_angle(s, e) - 1
            while s[e].isspace():
                e -= 1
        b = e
        while b >= 0 and (s[b].isalnum() or s[b] in '_:'):
            b -= 1
        b += 1
        name = s[b:j].strip()
        base = re.match(r'[\w:]+', name).group(0).split('::')[-1]
        k = s.find('>>>', j)
        cfg = s[j + 3:k]
        p = k + 3
        while s[p].isspace():
            p += 1
        assert s[p] == '(', f"transform: no '(' after launch of {name}"
        q = match_paren(s, p)
        args = s[p + 1:q].strip()
        bound = f'.bound({bounds[base]})' if base in bounds else ''
        rep = (f'::emu::launch(::emu::cfg({cfg}){bound}, "{base}", '
               f'[&](auto&... emu_a) {{ {name}(emu_a...); }}'
               + (f', {args})' if args else ')'))
        lost = s[b:q + 1].count('\n') - rep.count('\n')
        out.append(s[pos:b])
        out.append(rep + '\n' * max(lost, 0))
        pos = q + 1


SHARED_EXTERN = re.compile(
    r'extern\s+__shared__\s+(?:__align__\(\s*\d+\s*\)\s*)?([^;\[]+?)\s*'
    r'(\w+)\s*\[\s*\]\s*;')
SHARED = re.compile(r'__shared__\s+(?:__align__\(\s*\d+\s*\)\s*)?([^;]+);')
DECL = re.compile(r'\s*(\w+)\s*((?:\[[^\]]*\])*)\s*$')


def split_top(s):
    """Splits on commas outside <> and [] and ()."""
    parts, depth, cur = [], 0, ''
    for c in s:
        if c in '<[(':
            depth += 1
        elif c in '>])':
            depth -= 1
        if c == ',' and depth == 0:
            parts.append(cur)
            cur = ''
        else:
            cur += c
    parts.append(cur)
    return parts


def rewrite_shared(s):
    s = SHARED_EXTERN.sub(
        lambda m: f'{m.group(1)}* {m.group(2)} = '
                  f'reinterpret_cast<{m.group(1)}*>(::emu::dynamic_smem());',
        s)

    def one(m):
        body = m.group(1)
        parts = split_top(body)
        # "T a[N], b[M]": the type is the first declarator's prefix.
        first = parts[0]
        dm = re.match(r'(.*?)(\w+)\s*((?:\[[^\]]*\])*)\s*$', first, re.S)
        ty = dm.group(1).strip()
        decls = [(dm.group(2), dm.group(3))]
        for p in parts[1:]:
            d = DECL.match(p)
            decls.append((d.group(1), d.group(2)))
        out = []
        for name, dims in decls:
            out.append(f'static ::emu::Shared<{ty}{dims}> emu_sh_{name}; '
                       f'{ty}(&{name}){dims} = emu_sh_{name}.get();')
        return ' '.join(out)
    return SHARED.sub(one, s)


def main():
    src, dst = sys.argv[1], sys.argv[2]
    s = open(src).read()
    bounds = {}
    for m in re.finditer(
            r'__global__\s+void\s+__launch_bounds__\(([^)]*)\)\s*(\w+)', s):
        bounds[m.group(2)] = m.group(1)
    s = rewrite_shared(s)
    s = rewrite_launches(s, bounds)
    with open(dst, 'w') as f:
        f.write(f'#line 1 "{src}"\n')
        f.write(s)


if __name__ == '__main__':
    main()
